import { readFileSync } from 'node:fs';
import { desktopProcesses } from '../server/test/machines-desktops';

/** RSS and PSS (shared pages split between sharers) summed over a data dir's desktop processes, and how many machines they are. */
export function desktopMemory(dataDir: string): { machines: number; processes: number; rss: number; pss: number } {
  const procs = desktopProcesses(dataDir);
  let rss = 0;
  let pss = 0;
  for (const p of procs) {
    try {
      rss += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      pss += Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      /* exited meanwhile */
    }
  }
  return { machines: new Set(procs.map((p) => p.machineId)).size, processes: procs.length, rss, pss };
}
