/**
 * The machine a bench ran on, in one line printed before its figures: the same bench differs up to five-fold
 * between 2-core VMs that all call themselves "AMD EPYC" (README, Where the goals stand), so a figure is read
 * beside its host's speed. Three yardsticks: the CPU an `lxd --version` costs (the engine's Go start-up, which every
 * desktop's start pays three times; 31 ms on the fastest VM seen, 184 ms on the slowest), the time this process
 * takes to hash 64 MiB with SHA-256 (plain CPU, no engine), and what entering the kernel costs (kernelCosts): on the
 * slowest VM yet a page fault cost 14-23 µs, twenty times what its kernel takes to map a page when asked for many at
 * once, and a desktop's start makes about 39,000 of them (docs/benchmarks.md, Runs, 2026-12-02).
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

/**
 * Measured in python3 (the host has it: the image's build and the desktops' agent use it), each the best of three:
 * a system call (getppid, less the loop's own cost), the first touch of a page of fresh anonymous memory (a page
 * fault: the trap, the page's zeroing, its mapping) and a page of the same memory mapped in one call
 * (MAP_POPULATE: the zeroing and mapping without the trap), in µs.
 */
const KERNEL_PROBE = `
import mmap, os, time
def per(n, f):
    t = time.perf_counter(); f(n); return (time.perf_counter() - t) / n * 1e6
def calls(n):
    for _ in range(n): os.getppid()
def loop(n):
    for _ in range(n): abs(1)
def touch(n):
    m = mmap.mmap(-1, n * 4096)
    for i in range(0, n * 4096, 4096): m[i] = 1
    m.close()
def populate(n):
    mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE).close()
best = lambda f, n: min(per(n, f) for _ in range(3))
print(max(best(calls, 100000) - best(loop, 100000), 0), best(touch, 16384), best(populate, 16384))
`;

export interface KernelCosts {
  syscallUs: number;
  faultUs: number;
  populateUs: number;
}

/** What entering the kernel costs on this host (see KERNEL_PROBE), or null without python3. */
export function kernelCosts(): KernelCosts | null {
  const r = spawnSync('python3', ['-c', KERNEL_PROBE], { encoding: 'utf8' });
  const read = r.status === 0 ? r.stdout.trim().split(/\s+/).map(Number) : [];
  if (read.length !== 3 || !read.every(Number.isFinite)) return null;
  const [syscallUs, faultUs, populateUs] = read as [number, number, number];
  return { syscallUs, faultUs, populateUs };
}

const us = (n: number) => `${n < 10 ? n.toFixed(2) : n.toFixed(0)} µs`;

/** "a system call 1.01 µs, a page fault 13 µs (0.68 µs a page mapped in one call)". */
export function describeKernel(k: KernelCosts | null): string {
  if (!k) return 'no python3 for the kernel yardstick';
  return `a system call ${us(k.syscallUs)}, a page fault ${us(k.faultUs)} (${us(k.populateUs)} a page mapped in one call)`;
}

/** "host: AMD EPYC, 2 cores, 23 GiB; `lxd --version` 139 ms of CPU; SHA-256 of 64 MiB 180 ms; a system call 1.01 µs, …; load 0.10 0.20 0.30". */
export function describeHost(): string {
  const model = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const lxd = commandCpuMs('lxd', ['--version']);
  const parts = [
    `${model}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    lxd === null ? 'no lxd' : `\`lxd --version\` ${lxd.toFixed(0)} ms of CPU`,
    `SHA-256 of 64 MiB ${hashMs().toFixed(0)} ms`,
    describeKernel(kernelCosts()),
    `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  ];
  return `host: ${parts.join('; ')}`;
}
