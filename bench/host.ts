/**
 * The machine a bench ran on, in one line printed before its figures: the same bench differs up to five-fold
 * between 2-core VMs that all call themselves "AMD EPYC" (README, Where the goals stand), so a figure is read
 * beside its host's speed. Two yardsticks: the CPU an `lxd --version` costs (the engine's Go start-up, which every
 * desktop's start pays three times; 31 ms on the fastest VM seen, 139 ms on the slowest) and the time this process
 * takes to hash 64 MiB with SHA-256 (plain CPU, no engine).
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { statTicks, TICK_S } from './cpu-split';

const RUNS = 5;

/** CPU ms of this process's waited-for children so far (/proc/self/stat: cutime + cstime). */
export function childCpuMs(stat = readFileSync('/proc/self/stat', 'utf8')): number {
  return statTicks(stat).children * TICK_S * 1000;
}

/** Mean CPU ms of one run of the command (RUNS runs, for the clock tick's 10 ms grain), or null where it does not run. */
export function commandCpuMs(cmd: string, args: string[]): number | null {
  const before = childCpuMs();
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(cmd, args, { stdio: 'ignore' });
    if (r.error || r.status !== 0) return null;
  }
  return (childCpuMs() - before) / RUNS;
}

/** Wall ms to hash 64 MiB (the best of three). */
export function hashMs(): number {
  const chunk = Buffer.alloc(1024 * 1024, 7);
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    const h = createHash('sha256');
    for (let i = 0; i < 64; i++) h.update(chunk);
    h.digest();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/** "host: AMD EPYC, 2 cores, 23 GiB; `lxd --version` 139 ms of CPU; SHA-256 of 64 MiB 180 ms; load 0.10 0.20 0.30". */
export function describeHost(): string {
  const model = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const lxd = commandCpuMs('lxd', ['--version']);
  const parts = [
    `${model}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    lxd === null ? 'no lxd' : `\`lxd --version\` ${lxd.toFixed(0)} ms of CPU`,
    `SHA-256 of 64 MiB ${hashMs().toFixed(0)} ms`,
    `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  ];
  return `host: ${parts.join('; ')}`;
}
