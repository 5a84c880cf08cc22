/**
 * Where a host's CPU went between two snapshots, in CPU-seconds per part: the LXD daemon (with the processes it
 * forked and reaped: every exec's `lxd forkexec`), the desktops (every instance's cgroup, Xvnc apart: the X server and VNC server in one), named
 * processes of the bench (the server, the students), and the whole host (/proc/stat). Linux only; read as root.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export const TICK_S = 0.01; // USER_HZ is 100 on Linux

interface Snapshot {
  at: number;
  parts: Map<string, number>;
}

/**
 * Clock ticks of a /proc/<pid>/stat line: the process's own (utime + stime) and its waited-for children's (cutime +
 * cstime). The fields are counted from the last ') ', after the command name, which may hold spaces and ') ' itself.
 */
export function statTicks(stat: string): { own: number; children: number } {
  const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
}

function procTicks(pid: number | string, withChildren: boolean): number {
  try {
    const t = statTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return t.own + (withChildren ? t.children : 0);
  } catch {
    return 0;
  }
}

/** The host-side LXD daemon: `lxd --group lxd …` (not an instance's `[lxc monitor]`, whose command line differs). */
function daemonPids(): string[] {
  return readdirSync('/proc').filter((p) => {
    if (!/^\d+$/.test(p)) return false;
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('lxd\0--group');
    } catch {
      return false;
    }
  });
}

/** CPU-seconds of every instance's cgroup (exited processes included): cgroup v2, or v1's cpuacct. */
function instancesCpu(): number {
  const v1 = '/sys/fs/cgroup/cpuacct';
  const root = existsSync(v1) ? v1 : '/sys/fs/cgroup';
  let all = 0;
  for (const dir of readdirSync(root).filter((d) => d.startsWith('lxc.payload.'))) {
    try {
      if (root === v1) all += Number(readFileSync(`${root}/${dir}/cpuacct.usage`, 'utf8')) / 1e9;
      else all += Number(/usage_usec (\d+)/.exec(readFileSync(`${root}/${dir}/cpu.stat`, 'utf8'))?.[1] ?? 0) / 1e6;
    } catch {
      /* an instance that stopped meanwhile */
    }
  }
  return all;
}

/** CPU of the desktops, and of the Xvnc processes in them. */
function desktops(): { all: number; xvnc: number } {
  const all = instancesCpu();
  let xvnc = 0;
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'Xvnc') xvnc += procTicks(p, false) * TICK_S;
    } catch {
      /* gone */
    }
  }
  return { all, xvnc };
}

function hostBusy(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return (cpu.reduce((a, b) => a + b, 0) - idle) * TICK_S;
}

/** The LXD daemon's CPU-seconds, its reaped children's included (every exec's `lxd forkexec`). */
export function lxdDaemonCpu(): number {
  return daemonPids().reduce((s, p) => s + procTicks(p, true) * TICK_S, 0);
}

/** A snapshot; `named` are processes of the bench to show on their own (their children's reaped CPU included). */
export function cpuSnapshot(named: Record<string, number> = {}): Snapshot {
  const parts = new Map<string, number>();
  parts.set('host, all of it', hostBusy());
  parts.set('LXD daemon (with its execs)', lxdDaemonCpu());
  const d = desktops();
  parts.set('desktops: Xvnc (X and VNC)', d.xvnc);
  parts.set('desktops: everything else', d.all - d.xvnc);
  for (const [name, pid] of Object.entries(named)) parts.set(name, procTicks(pid, true) * TICK_S);
  return { at: performance.now(), parts };
}

/** Lines of "part: CPU-seconds (cores on average)" between two snapshots. */
export function cpuSplit(a: Snapshot, b: Snapshot): string[] {
  const wall = (b.at - a.at) / 1000;
  return [...b.parts].map(([name, v]) => {
    const used = v - (a.parts.get(name) ?? 0);
    return `${name.padEnd(34)} ${used.toFixed(1).padStart(7)} CPU-s  (${(used / wall).toFixed(2)} cores over ${wall.toFixed(1)} s)`;
  });
}
