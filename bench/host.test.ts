import { describe, expect, it } from 'vitest';
import { childCpuMs, commandCpuMs, describeHost, describeKernel, kernelCosts } from './host';

// The yardsticks run commands whose CPU, not time, is what they count: room to finish on a slow, busy VM.
describe('the host line', { timeout: 120_000 }, () => {
  it("reads children's CPU from a stat line whose command name holds spaces and ') '", () => {
    const fields = ['S', ...Array.from({ length: 12 }, (_, i) => String(i + 1)), '7', '5', '0'];
    expect(childCpuMs(`42 (a) b (c) ${fields.join(' ')}`)).toBe(120);
  });

  // A 300,000-step loop ran past vitest's 5 s on a slow VM while the test run's LXD set-up used the other core.
  it('counts the CPU a command spends, and nothing for one that does not run', () => {
    const busy = commandCpuMs('sh', ['-c', 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done']);
    expect(busy).toBeGreaterThan(0);
    expect(commandCpuMs('/nonexistent/program', [])).toBeNull();
    expect(commandCpuMs('false', [])).toBeNull();
  });

  it('names the CPU, its cores and the yardsticks', () => {
    expect(describeHost()).toMatch(/^host: .+, \d+ cores, \d+ GiB; (no lxd|`lxd --version` \d+ ms of CPU); SHA-256 of 64 MiB \d+ ms; a system call [\d.]+ µs, a page fault [\d.]+ µs \([\d.]+ µs a page mapped in one call\); load /);
  });

  // Times only, none compared with another: on a busy host any of them can be stretched by what else runs (a test
  // that a fault costs more than a bulk-mapped page would fail on the host's load, not on the code).
  it("times a system call, a page's first touch and a page mapped in bulk", () => {
    const k = kernelCosts();
    expect(k).not.toBeNull();
    expect(k!.syscallUs).toBeGreaterThanOrEqual(0);
    expect(k!.faultUs).toBeGreaterThan(0);
    expect(k!.populateUs).toBeGreaterThan(0);
    expect(describeKernel(null)).toBe('no python3 for the kernel yardstick');
    expect(describeKernel({ syscallUs: 1.014, faultUs: 13.4, populateUs: 0.68 })).toBe('a system call 1.01 µs, a page fault 13 µs (0.68 µs a page mapped in one call)');
  });
});
