import { readdirSync, readFileSync } from 'node:fs';

/** Process bookkeeping for the local provider, read from /proc. */

export interface ProcInfo {
  pid: number;
  zombie: boolean;
  /** Start time in clock ticks since boot: with the pid, it names a process even when pids are reused. */
  start: number;
}

export function procInfo(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …" — comm may contain spaces and parentheses, so parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, zombie: rest[0] === 'Z' || rest[0] === 'X', start: Number(rest[19]) };
  } catch {
    return null;
  }
}

export function alive(pid: number): boolean {
  const info = procInfo(pid);
  return !!info && !info.zombie;
}

/** The process that was started at `start` is still running (not a reused pid). */
export function sameProcess(pid: number, start: number): boolean {
  const info = procInfo(pid);
  return !!info && !info.zombie && info.start === start;
}

/** Live pids whose real, effective or saved uid is one of `uids` (a machine's processes, wherever they went). */
export function pidsOfUids(uids: Set<number>): number[] {
  return processesOfUids(uids).map((p) => p.pid);
}

/** Live processes (pid and matching uid) whose real, effective or saved uid is one of `uids`; one /proc scan. */
export function processesOfUids(uids: Set<number>): { pid: number; uid: number }[] {
  const out: { pid: number; uid: number }[] = [];
  if (!uids.size) return out;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    const ids = status.match(/^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m);
    const state = status.match(/^State:\s+(\S)/m)?.[1];
    if (!ids || state === 'Z' || state === 'X') continue;
    const uid = [ids[1], ids[2], ids[3]].map(Number).find((u) => uids.has(u));
    if (uid !== undefined) out.push({ pid: Number(name), uid });
  }
  return out;
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SIGKILLs what `find` answers until it answers nothing (a fork bomb refills between rounds; its pid limit
 * bounds each round). Answers the survivors when time runs out.
 */
export async function killAll(find: () => number[], timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = find().filter((p) => p !== process.pid);
    if (!pids.length || Date.now() > deadline) return pids;
    pids.forEach((p) => signal(p, 'SIGKILL'));
    await sleep(pids.some(alive) ? 30 : 0);
  }
}
