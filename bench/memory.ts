import { readdirSync, readFileSync } from 'node:fs';
import { fmtBytes } from './stats';

export interface DesktopMemory {
  machines: number;
  processes: number;
  rss: number;
  pss: number;
  /** PSS of the engine's own process per instance (LXD's `[lxc monitor]`), not the desktop's programs. */
  enginePss: number;
  /** PSS per program name (comm), summed over the desktops. */
  byProgram: Map<string, number>;
}

/** Host pids of a deployment's running instances (their cgroup `lxc.payload.<project>_hd-<id>`), and their monitors. */
export function instanceProcesses(project: string): { pid: number; comm: string; machineId: string; monitor: boolean }[] {
  const payload = new RegExp(`lxc\\.payload\\.${project}_hd-([A-Za-z0-9-]+)(/|$)`, 'm');
  const monitor = new RegExp(`^\\[lxc monitor\\] \\S+ ${project}_hd-([A-Za-z0-9-]+)`);
  const out: { pid: number; comm: string; machineId: string; monitor: boolean }[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const inside = payload.exec(readFileSync(`/proc/${e}/cgroup`, 'utf8'));
      const mon = inside ? null : monitor.exec(readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' '));
      const id = inside?.[1] ?? mon?.[1];
      if (id) out.push({ pid: Number(e), comm: readFileSync(`/proc/${e}/comm`, 'utf8').trim(), machineId: id, monitor: !!mon });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/**
 * RSS and PSS (shared pages split between sharers) summed over a deployment's desktop processes (everything in its
 * instances and LXD's monitor process of each), and how many machines they are.
 */
export function desktopMemory(project: string): DesktopMemory {
  const procs = instanceProcesses(project);
  const out: DesktopMemory = { machines: new Set(procs.map((p) => p.machineId)).size, processes: procs.length, rss: 0, pss: 0, enginePss: 0, byProgram: new Map() };
  for (const p of procs) {
    try {
      const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
      const pss = Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
      out.rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      out.pss += pss;
      if (p.monitor) out.enginePss += pss;
      out.byProgram.set(p.comm, (out.byProgram.get(p.comm) ?? 0) + pss);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** The memory report both machine benchmarks print. */
export function printDesktopMemory(m: DesktopMemory): void {
  const per = (n: number) => fmtBytes(n / m.machines);
  console.log(
    `\nMemory with ${m.machines} desktops running (${m.processes} processes): RSS ${per(m.rss)} per desktop (sum ${fmtBytes(m.rss)}), ` +
      `PSS ${per(m.pss)} per desktop (sum ${fmtBytes(m.pss)})`,
  );
  console.log(`  of which LXD's monitor process of each instance: PSS ${per(m.enginePss)} per desktop`);
  const top = [...m.byProgram].sort((a, b) => b[1] - a[1]).map(([c, v]) => `${c} ${per(v)}`);
  console.log(`  PSS per desktop by program: ${top.join(', ')}`);
}
