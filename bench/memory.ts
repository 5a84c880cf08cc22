import { readFileSync } from 'node:fs';
import { desktopProcesses } from '../server/test/machines-desktops';
import { fmtBytes } from './stats';

export interface DesktopMemory {
  machines: number;
  processes: number;
  rss: number;
  pss: number;
  /** PSS of the sandbox's own processes (root-run: supervisor, bwrap, slirp4netns), not the desktop's programs. */
  sandboxPss: number;
  /** PSS per program name (comm), summed over the desktops. */
  byProgram: Map<string, number>;
}

/**
 * RSS and PSS (shared pages split between sharers) summed over a data dir's desktop processes, and how many
 * machines they are. The sandbox's share is what its root-run processes take: the same programs would run without
 * it, and bwrap's read-only binds share the page cache with the host.
 */
export function desktopMemory(dataDir: string): DesktopMemory {
  const procs = desktopProcesses(dataDir);
  const out: DesktopMemory = { machines: new Set(procs.map((p) => p.machineId)).size, processes: procs.length, rss: 0, pss: 0, sandboxPss: 0, byProgram: new Map() };
  for (const p of procs) {
    try {
      const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
      const pss = Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
      out.rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      out.pss += pss;
      if (/^Uid:\s+0\s/m.test(status)) out.sandboxPss += pss;
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
  const inside = m.pss - m.sandboxPss;
  console.log(
    `  of which the sandbox's own processes (supervisor, bwrap, slirp4netns): PSS ${per(m.sandboxPss)} per desktop; ` +
      `with the sandbox / the same programs without it: ${(m.pss / inside).toFixed(3)}×`,
  );
  const top = [...m.byProgram].sort((a, b) => b[1] - a[1]).map(([c, v]) => `${c} ${per(v)}`);
  console.log(`  PSS per desktop by program: ${top.join(', ')}`);
}
