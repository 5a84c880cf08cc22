import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';

/**
 * Process bookkeeping for the local provider, read from /proc. Every desktop process carries two environment
 * markers (inherited by whatever the user starts in the desktop), so the provider finds all of a machine's
 * processes even after a crash left no state file, or a program left the desktop's process group.
 */
export const MARK_DATA_DIR = 'HYPERDESK_DATA_DIR';
export const MARK_MACHINE = 'HYPERDESK_MACHINE';

export interface ProcInfo {
  pid: number;
  pgrp: number;
  zombie: boolean;
}

/** pid, process group and zombie state from /proc/<pid>/stat, or null when the process is gone. */
export function procInfo(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp …" — comm may contain spaces and parentheses, so parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, zombie: rest[0] === 'Z' || rest[0] === 'X', pgrp: Number(rest[2]) };
  } catch {
    return null;
  }
}

/** The desktop markers of a process ({ dataDir, machineId }), or null for any other process. */
export function markersOf(pid: number): { dataDir: string; machineId: string } | null {
  let env: string;
  try {
    env = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return null;
  }
  let dataDir: string | undefined;
  let machineId: string | undefined;
  for (const kv of env.split('\0')) {
    if (kv.startsWith(`${MARK_DATA_DIR}=`)) dataDir = kv.slice(MARK_DATA_DIR.length + 1);
    else if (kv.startsWith(`${MARK_MACHINE}=`)) machineId = kv.slice(MARK_MACHINE.length + 1);
  }
  return dataDir && machineId ? { dataDir, machineId } : null;
}

/** The machine id a process belongs to when it carries our markers for this data dir, else null. */
export function machineOfProcess(pid: number, dataDir: string): string | null {
  const m = markersOf(pid);
  return m && m.dataDir === dataDir ? m.machineId : null;
}

/** Every live (non-zombie) desktop process on this host, with its markers. */
function scanAll(): { pid: number; dataDir: string; machineId: string }[] {
  const found: { pid: number; dataDir: string; machineId: string }[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const pid = Number(name);
    const m = markersOf(pid);
    if (!m) continue;
    const info = procInfo(pid);
    if (info && !info.zombie) found.push({ pid, ...m });
  }
  return found;
}

/** Live processes of this data dir's desktops, grouped by machine id. */
export function scanDesktops(dataDir: string, onlyMachine?: string): Map<string, number[]> {
  const found = new Map<string, number[]>();
  for (const p of scanAll()) {
    if (p.dataDir !== dataDir || (onlyMachine && p.machineId !== onlyMachine)) continue;
    found.set(p.machineId, [...(found.get(p.machineId) ?? []), p.pid]);
  }
  return found;
}

/**
 * Desktop processes whose data dir no longer exists on this host: nothing can adopt them (their home is gone),
 * so they are ended by whichever server notices.
 */
export function abandonedDesktopPids(): number[] {
  const gone = new Map<string, boolean>();
  return scanAll()
    .filter((p) => {
      if (!gone.has(p.dataDir)) gone.set(p.dataDir, !existsSync(p.dataDir));
      return gone.get(p.dataDir);
    })
    .map((p) => p.pid);
}

export function alive(pid: number): boolean {
  const info = procInfo(pid);
  return !!info && !info.zombie;
}

export function signal(pid: number, sig: NodeJS.Signals, group = false): void {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    /* already gone */
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until none of the pids is alive; answers the survivors when time runs out. */
export async function waitGone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids.filter(alive);
  while (left.length && Date.now() < deadline) {
    await sleep(50);
    left = left.filter(alive);
  }
  return left;
}

/** The pid written in an X server's lock file, or null when there is none. */
export function xLockPid(display: number): number | null {
  try {
    const pid = Number(readFileSync(`/tmp/.X${display}-lock`, 'latin1').replace(/\D/g, ''));
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Removes the lock file and socket a killed X server left behind (only when their owner is dead). */
export function clearStaleX(display: number): void {
  const pid = xLockPid(display);
  if (pid !== null && alive(pid)) return;
  rmSync(`/tmp/.X${display}-lock`, { force: true });
  rmSync(`/tmp/.X11-unix/X${display}`, { force: true });
}
