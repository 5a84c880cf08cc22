import { describe, expect, it } from 'vitest';
import { childCpuMs, commandCpuMs, describeHost } from './host';

// Both yardsticks run commands whose CPU, not time, is what they count: room to finish on a slow, busy VM.
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

  it('names the CPU, its cores and both yardsticks', () => {
    expect(describeHost()).toMatch(/^host: .+, \d+ cores, \d+ GiB; (no lxd|`lxd --version` \d+ ms of CPU); SHA-256 of 64 MiB \d+ ms; load /);
  });
});
