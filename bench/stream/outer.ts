/**
 * bench:stream's host side (root, the host's network namespace): builds the shaped link, runs the server as npm start
 * runs it on the host's end, runs the driver (bench/stream.ts --inner) in the client's namespace, and removes
 * everything again: on success, on error, on SIGINT/SIGTERM and after LIMIT_MS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServerOnce, removeDesktops, SERVER_COMMAND } from '../../e2e/harness';
import { lxdProjectFor } from '../../server/src/config';
import { describeHost } from '../host';
import { createLink, destroyLink, planLink, startDelayLines, type DelayLine, type Link } from './netns';
import { LINK, LOSS, PORT, type InnerConfig, type Transport } from './run';
import { sleep } from './desktop';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The whole bench ends (and cleans up) after this long whatever happens. */
const LIMIT_MS = 40 * 60_000;

type Args = Pick<InnerConfig, 'runs' | 'seconds' | 'samples' | 'transports'>;

/** What the bench runs: `[runs (3)] [seconds per sample (20)] [key presses per run (15)] [webrtc|vnc|both]`. */
function parseArgs(argv: string[]): Args {
  const [runs, seconds, samples] = [Number(argv[0] ?? 3), Number(argv[1] ?? 20), Number(argv[2] ?? 15)];
  const which = argv[3] ?? 'both';
  if (!['webrtc', 'vnc', 'both'].includes(which)) throw new Error('the fifth argument is webrtc, vnc or both');
  return { runs, seconds, samples, transports: which === 'both' ? ['webrtc', 'vnc'] : [which as Transport] };
}

/** Everything the run made, and what it heard, as far as it got. */
interface Made {
  link: Link;
  dataDir: string;
  server: ChildProcess | null;
  inner: ChildProcess | null;
  lines: DelayLine[];
  serverOut: string;
}

async function stopProcess(p: ChildProcess | null, ms: number): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const gone = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  if (!(await Promise.race([gone.then(() => true), sleep(ms).then(() => false)]))) p.kill('SIGKILL');
}

/** Stops the driver and the server, ends the desktops, the delay lines and the namespaces, and prints the lines' counters. */
async function removeAll(m: Made): Promise<void> {
  await stopProcess(m.inner, 15_000);
  await stopProcess(m.server, 10_000);
  // Desktops outlive the server on purpose (a restart adopts them): end them (the deployment's LXD project).
  try {
    await removeDesktops(m.dataDir);
  } catch (e) {
    console.error('could not end the desktops:', e);
  }
  for (const l of m.lines) l.proc.kill('SIGTERM');
  const counts = await Promise.race([Promise.all(m.lines.map((l) => l.counts)), sleep(3000).then(() => [])]);
  await destroyLink(m.link);
  rmSync(m.dataDir, { recursive: true, force: true });
  counts.forEach((c, i) =>
    console.log(
      `delay line ${i ? 'client → server' : 'server → client'}: ${c ? `${c.udp} UDP packets (+${c.udpDropped} dropped), ${c.tcp} TCP, ` +
        `${((c.bytes ?? 0) / 1e6).toFixed(1)} MB, ${c.queueFull} refused by the full shaper queue` : 'no counters'}`,
    ),
  );
}

/** As npm start runs it (LXD prepared for this data dir, then the compiled server as the unprivileged user), on the host's end of the link. */
function startServer(m: Made): ChildProcess {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(PORT),
    HOST: m.link.hostIp,
    // The browser reaches the server through a forwarder on its own loopback (a loopback public URL is what the
    // server allows plain http cookies on); the forwarder's traffic then crosses the shaped link.
    PUBLIC_URL: `http://127.0.0.1:${PORT}`,
    DATA_DIR: m.dataDir,
    LOG_LEVEL: 'warn',
    MACHINE_PROVIDER: 'lxd',
  };
  delete env.DATABASE_URL; // its own PGlite database
  const [sh, ...shArgs] = SERVER_COMMAND;
  const server = spawn(sh, shArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (d) => (m.serverOut += d));
  server.stderr!.on('data', (d) => (m.serverOut += d));
  return server;
}

/** The driver (`driver --inner CONFIG`) in the client's namespace; resolves with its exit code. */
function runDriver(m: Made, driver: string, args: Args): Promise<number> {
  const cfg: InnerConfig = {
    ...args,
    base: `http://127.0.0.1:${PORT}`,
    srvIp: m.link.hostIp,
    project: lxdProjectFor(path.resolve(m.dataDir)),
    selkies: process.env.SELKIES_BUNDLE ? path.resolve(process.env.SELKIES_BUNDLE) : null,
  };
  const l = m.link;
  console.log(
    `link: server ${l.hostIp} ═ ${l.srv} (${l.srvIp}) and ${l.cli} (${l.cliIp}), ${LINK.kbps} kbit/s each way (tbf, ` +
      `${LINK.queueMs} ms queue), +${LINK.rttMs} ms RTT, ${LOSS} (delay lines)`,
  );
  m.inner = spawn('ip', ['netns', 'exec', l.cli, process.execPath, '--import', 'tsx', driver, '--inner', JSON.stringify(cfg)], { cwd: ROOT, stdio: 'inherit' });
  return new Promise<number>((r) => m.inner!.once('exit', (c) => r(c ?? 1)));
}

/** The bench's host side; `driver` is the file whose `--inner` runs the browser's side. Exits the process when done. */
export async function outer(driver: string, argv: string[]): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:stream needs root (network namespaces, tc).');
  if (!existsSync(path.join(ROOT, 'web/dist/index.html'))) throw new Error('web/dist is missing: run `npm run build` first.');
  const args = parseArgs(argv);
  console.log(describeHost());
  await buildServerOnce();
  const m: Made = {
    link: planLink({ ...LINK, maxSeconds: LIMIT_MS / 1000 }),
    dataDir: mkdtempSync(path.join(tmpdir(), 'hd-bench-stream-')),
    server: null,
    inner: null,
    lines: [],
    serverOut: '',
  };
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= removeAll(m));
  let exiting = false;
  const bail = (code: number, why: string) => {
    if (exiting) return;
    exiting = true;
    console.error(why);
    void cleanup().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => bail(130, 'interrupted: cleaning up'));
  process.on('SIGTERM', () => bail(143, 'terminated: cleaning up'));
  const limit = setTimeout(() => bail(1, `time limit (${LIMIT_MS / 60_000} min) reached: cleaning up`), LIMIT_MS);
  let code = 1;
  try {
    createLink(m.link);
    m.lines = await startDelayLines(m.link);
    m.server = startServer(m);
    code = await runDriver(m, driver, args);
    if (code !== 0) console.error(`the driver failed; the server's last output:\n${m.serverOut.slice(-3000)}`);
  } catch (e) {
    console.error(e);
    if (m.serverOut) console.error(`server output:\n${m.serverOut.slice(-3000)}`);
  } finally {
    clearTimeout(limit);
    await cleanup(); // the same promise when a signal already started it: wait for it, do not exit under it
  }
  if (!exiting) process.exit(code);
}
