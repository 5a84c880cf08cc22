/**
 * The shaped link of bench:stream: two network namespaces made for one run joined by a veth pair, each direction
 * shaped to the link rate by tc tbf on the veth (this kernel has no netem), and a user-space delay line
 * (delayline.py) in each namespace. The server and its LXD desktops stay where production has them (the host's
 * namespace, the desktops' bridge); the "mid" namespace is the router between the host and the shaped link:
 *
 *   [host: server on 10.214.N.1, desktops on the LXD bridge] ═ veth (10.214.N.1 ↔ .2) ═ [mid: forwards]
 *       TUN 10.213.N.1 → delay line → veth ══ tbf 2 Mbit/s each way ══ veth ← delay line ← TUN 10.213.N.2 [cli]
 *
 * Each shaped namespace's only link address (10.213.N.1 / .2, a point-to-point pair) sits on a TUN device that the
 * delay line reads: every packet to the other end enters it, is held half the RTT, a share of the UDP ones is
 * dropped, and the rest leaves through the veth as Ethernet frames (so they still cross the shaper); the other side
 * receives them on its veth (weak host model, reverse-path filtering off in the run's namespaces). The host gets one
 * veth end and one route (to the client's address, via the mid namespace); all goes away with the namespaces.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface LinkOptions {
  /** Rate of each direction, in kbit/s. */
  kbps: number;
  /** Added round trip (half on each direction), ms. */
  rttMs: number;
  /** Share of UDP packets dropped in each direction (0.005 = 0.5%). */
  udpLoss: number;
  /** The same from the browser to the server, where it differs (input and its acknowledgements). */
  upLoss?: number;
  /** How long the shaper may queue before it drops (tbf latency), ms. */
  queueMs: number;
  /** The delay lines end by themselves after this long. */
  maxSeconds: number;
}

export interface Link {
  id: string;
  /** The router namespace on the server's side of the shaped link. */
  srv: string;
  cli: string;
  /** The shaped link's ends (TUN addresses) in the mid and client namespaces. */
  srvIp: string;
  cliIp: string;
  srvDev: string;
  cliDev: string;
  /** The host's end of the veth into the mid namespace, and its address: where the server listens. */
  hostDev: string;
  hostIp: string;
  midHostDev: string;
  midHostIp: string;
  opts: LinkOptions;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 }).toString();
const ip = (...args: string[]) => run('ip', args);
const inNs = (ns: string, cmd: string, ...args: string[]) => run('ip', ['netns', 'exec', ns, cmd, ...args]);

/** Names unique to this run (interface names stay within Linux's 15 characters). */
export function planLink(opts: LinkOptions): Link {
  const id = randomBytes(3).toString('hex');
  const net = 16 + (randomBytes(1)[0]! % 224); // 10.213.N.0/30 and 10.214.N.0/30
  return {
    id,
    srv: `hd-bench-mid-${id}`,
    cli: `hd-bench-cli-${id}`,
    srvIp: `10.213.${net}.1`,
    cliIp: `10.213.${net}.2`,
    srvDev: `hdbs-${id}`,
    cliDev: `hdbc-${id}`,
    hostDev: `hdbh-${id}`,
    hostIp: `10.214.${net}.1`,
    midHostDev: `hdbm-${id}`,
    midHostIp: `10.214.${net}.2`,
    opts,
  };
}

function mac(ns: string, dev: string): string {
  return (JSON.parse(ip('-n', ns, '-j', 'link', 'show', 'dev', dev)) as { address: string }[])[0]!.address;
}

/** The namespaces, the veth pairs, addresses, routes and the tbf shapers. */
export function createLink(l: Link): void {
  ip('netns', 'add', l.srv);
  ip('netns', 'add', l.cli);
  // Created straight inside the namespaces: the host's namespace never sees these interfaces.
  ip('link', 'add', l.srvDev, 'netns', l.srv, 'type', 'veth', 'peer', 'name', l.cliDev, 'netns', l.cli);
  for (const [ns, dev] of [
    [l.srv, l.srvDev],
    [l.cli, l.cliDev],
  ] as const) {
    // IPv4 only (no IPv6 link-local path around the delay line); replies come in on the veth but leave through the
    // TUN device, so reverse-path filtering is off.
    inNs(ns, 'sh', '-c', [
      'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6',
      'echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6',
      'echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter',
      'echo 0 > /proc/sys/net/ipv4/conf/default/rp_filter',
      `echo 0 > /proc/sys/net/ipv4/conf/${dev}/rp_filter`,
    ].join(' && '));
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'link', 'set', dev, 'up');
    // Egress of each end = one direction of the link.
    inNs(ns, 'tc', 'qdisc', 'add', 'dev', dev, 'root', 'tbf', 'rate', `${l.opts.kbps}kbit`, 'burst', '10kb', 'latency', `${l.opts.queueMs}ms`);
  }
  // The host ↔ mid veth: the mid namespace forwards between the host (server, desktops) and the shaped link.
  ip('link', 'add', l.hostDev, 'type', 'veth', 'peer', 'name', l.midHostDev, 'netns', l.srv);
  ip('addr', 'add', `${l.hostIp}/30`, 'dev', l.hostDev);
  ip('link', 'set', l.hostDev, 'up');
  ip('-n', l.srv, 'addr', 'add', `${l.midHostIp}/30`, 'dev', l.midHostDev);
  ip('-n', l.srv, 'link', 'set', l.midHostDev, 'up');
  inNs(l.srv, 'sh', '-c', `echo 1 > /proc/sys/net/ipv4/ip_forward && echo 0 > /proc/sys/net/ipv4/conf/${l.midHostDev}/rp_filter`);
  ip('-n', l.srv, 'route', 'add', 'default', 'via', l.hostIp);
  ip('route', 'add', `${l.cliIp}/32`, 'via', l.midHostIp, 'dev', l.hostDev);
}

export interface DelayLine {
  proc: ChildProcess;
  /** The delay line's counters once it has ended. */
  counts: Promise<Record<string, number> | null>;
}

/** One delay line per direction: ns's traffic to the other end goes through it. */
export async function startDelayLines(l: Link): Promise<DelayLine[]> {
  const macs = { [l.srvDev]: mac(l.srv, l.srvDev), [l.cliDev]: mac(l.cli, l.cliDev) };
  const lines: DelayLine[] = [];
  for (const [ns, dev, peerDev, peerIp, ownIp] of [
    [l.srv, l.srvDev, l.cliDev, l.cliIp, l.srvIp],
    [l.cli, l.cliDev, l.srvDev, l.srvIp, l.cliIp],
  ] as const) {
    const tun = `hdbt-${l.id}`;
    const proc = spawn(
      'ip',
      ['netns', 'exec', ns, 'nice', '-n', '-10', '/usr/bin/python3', path.join(HERE, 'delayline.py'), tun, dev, macs[peerDev]!, macs[dev]!,
        String(l.opts.rttMs / 2), String(ns === l.cli ? (l.opts.upLoss ?? l.opts.udpLoss) : l.opts.udpLoss), String(l.opts.maxSeconds)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (err += d));
    const counts = new Promise<Record<string, number> | null>((resolve) =>
      proc.on('exit', () => {
        try {
          resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Record<string, number>);
        } catch {
          resolve(null);
        }
      }),
    );
    lines.push({ proc, counts });
    const deadline = Date.now() + 10_000;
    while (!out.startsWith('ready')) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`delay line in ${ns} did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    ip('-n', ns, 'addr', 'add', ownIp, 'peer', peerIp, 'dev', tun);
    ip('-n', ns, 'link', 'set', tun, 'up');
  }
  // The client reaches everything (the server, the desktops' bridge) across the link.
  ip('-n', l.cli, 'route', 'add', 'default', 'dev', `hdbt-${l.id}`);
  return lines;
}

/** The inode of a namespace's network namespace (what /proc/PID/ns/net of its processes points to). */
export function netnsInode(ns: string): number {
  return statSync(`/run/netns/${ns}`).ino;
}

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  cmdline: string;
  netns: number;
}

/** A snapshot of the processes on this host (pid, parent, name, command line, network namespace). */
export function processes(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const netns = Number(/\[(\d+)\]/.exec(readlinkSync(`/proc/${name}/ns/net`))?.[1] ?? 0);
      out.set(Number(name), { pid: Number(name), ppid, comm, cmdline, netns });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Processes matching `pred` that run in the namespace `inode` or descend from a process that does. */
export function findUnder(inode: number, pred: (p: Proc) => boolean): number[] {
  const all = processes();
  const inside = (p: Proc | undefined): boolean => {
    for (let i = 0; p && i < 64; i++, p = all.get(p.ppid)) if (p.netns === inode) return true;
    return false;
  };
  return [...all.values()].filter((p) => pred(p) && inside(p)).map((p) => p.pid);
}

/** Processes matching `pred` that run in the LXD instance `instance` (its cgroup, lxc.payload.<project>_<instance>). */
export function findInInstance(instance: string, pred: (p: Proc) => boolean): number[] {
  return [...processes().values()]
    .filter((p) => {
      try {
        return pred(p) && readFileSync(`/proc/${p.pid}/cgroup`, 'utf8').includes(`_${instance}`);
      } catch {
        return false;
      }
    })
    .map((p) => p.pid);
}

/** Processes' CPU (cores: CPU-s over `dt` seconds, from two usage() readings) and resident memory at the end (MiB). */
export function useBetween(before: ReturnType<typeof usage>[], after: ReturnType<typeof usage>[], dt: number): { cores: number; rssMiB: number } {
  const cpuS = after.reduce((sum, u, i) => sum + ((u?.cpuS ?? 0) - (before[i]?.cpuS ?? 0)), 0);
  return { cores: cpuS / dt, rssMiB: after.reduce((sum, u) => sum + (u?.rss ?? 0), 0) / 1024 / 1024 };
}

/** CPU time (user + system, in seconds, all threads) and resident memory (bytes) of a process, or null. */
export function usage(pid: number): { cpuS: number; rss: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]); // utime, stime
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    return { cpuS: ticks / 100, rss };
  } catch {
    return null;
  }
}

/**
 * Ends every process left in the run's namespaces, then removes the namespaces; the veth pairs (the host's end too,
 * and with it the host's route to the client) and the TUN devices go with them.
 */
export async function destroyLink(l: Link): Promise<void> {
  const inodes: number[] = [];
  for (const ns of [l.srv, l.cli]) {
    try {
      inodes.push(netnsInode(ns));
    } catch {
      /* not created */
    }
  }
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const pids = inodes.flatMap((i) => findUnder(i, (p) => p.pid !== process.pid));
    if (!pids.length) break;
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        /* gone */
      }
    }
    await new Promise((r) => setTimeout(r, 1500));
  }
  for (const ns of [l.srv, l.cli]) {
    try {
      ip('netns', 'del', ns);
    } catch {
      /* not there */
    }
  }
}
