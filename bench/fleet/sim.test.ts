import { describe, expect, it } from 'vitest';
import { PROVIDERS, week } from './model';
import { percentile, simulate } from './sim';

/** The fleet simulation's logic (its figures are printed by npm run sim:fleet). */
describe('fleet simulation', () => {
  const w = week();
  const [, k8s, ec2] = PROVIDERS;

  it('replays the same week the same way every run', () => {
    expect(simulate(w, ec2!, { pool: 8, prestart: true })).toEqual(simulate(w, ec2!, { pool: 8, prestart: true }));
    expect(w.sessions.filter((s) => s.kind === 'student').length).toBeGreaterThan(600);
  });

  it('has students find their machines running when the course is pre-started, and waiting when it is not', () => {
    const late = simulate(w, k8s!, { pool: 0, prestart: false });
    const early = simulate(w, k8s!, { pool: 0, prestart: true });
    expect(percentile(late.student, 0.95)).toBeGreaterThan(60);
    expect(percentile(early.student, 0.99)).toBeLessThanOrEqual(1.01);
  });

  it('trades idle GPU-hours for single users’ start latency as the warm pool grows', () => {
    const sizes = [0, 8, 24].map((pool) => simulate(w, ec2!, { pool, prestart: true }));
    expect(percentile(sizes[0]!.single, 0.5)).toBeGreaterThan(20);
    expect(percentile(sizes[2]!.single, 0.99)).toBeLessThan(6);
    expect(sizes[0]!.idleGpuHours).toBeLessThan(sizes[1]!.idleGpuHours);
    expect(sizes[1]!.idleGpuHours).toBeLessThan(sizes[2]!.idleGpuHours);
    for (const o of sizes) expect(o.gpuHours).toBeGreaterThan(o.idleGpuHours);
  });
});
