/**
 * A server as production runs it, in a process of its own (issue 23.6: benchmark what `npm start` runs): spawned,
 * its log lines read and parsed as a log collector would, ready once a path answers 200, stopped with SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** How production starts the server: scripts/run-server.sh (as root: LXD prepared, node as the unprivileged user). */
export const SERVER_COMMAND = ['sh', path.join(ROOT, 'scripts/run-server.sh')];

/** What the bench's log collector saw of one process: lines and bytes, warnings and errors, and the last lines. */
export interface Collected {
  lines: number;
  bytes: number;
  warnings: number;
  /** The first few warning or error messages. */
  warned: string[];
  tail: string[];
}

export interface Proc {
  name: string;
  proc: ChildProcess;
  pid: number;
  port: number;
  log: Collected;
  stop(): Promise<void>;
}

/** Reads a process's stdout and stderr line by line and parses the JSON lines, as a log collector would. */
function collect(proc: ChildProcess): Collected {
  const c: Collected = { lines: 0, bytes: 0, warnings: 0, warned: [], tail: [] };
  const take = (line: string) => {
    c.lines++;
    c.bytes += line.length + 1;
    let entry: { level?: number; msg?: string } = {};
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      // a plain line (the start-up banner): info
    }
    if ((entry.level ?? 30) >= 40 && ++c.warnings <= 5) c.warned.push(String(entry.msg ?? line).slice(0, 160));
    c.tail.push(line);
    if (c.tail.length > 20) c.tail.shift();
  };
  createInterface({ input: proc.stdout! }).on('line', take);
  createInterface({ input: proc.stderr! }).on('line', take);
  return c;
}

/** Spawns a server process, waits until `ready` answers 200; stop() ends it with SIGTERM (main.ts drains). */
export async function startProcess(name: string, cmd: string[], env: Record<string, string>, port: number, ready: string): Promise<Proc> {
  const proc = spawn(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = collect(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited (${proc.exitCode}):\n${log.tail.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${name} not ready in 180 s:\n${log.tail.join('\n')}`);
    if (await fetch(`http://127.0.0.1:${port}${ready}`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name,
    proc,
    pid: proc.pid!,
    port,
    log,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** The environment of a child: ours without database settings, plus `extra`. */
export function childEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.PORT;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

