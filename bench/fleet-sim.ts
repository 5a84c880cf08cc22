/**
 * npm run sim:fleet — replays a week of single users and 10 courses of 40 against the start-time models of each
 * machine provider (docs/providers.md) and prints start-latency percentiles and idle GPU-hours per warm-pool policy.
 * Deterministic (seeded): the same figures every run.
 */
import { week } from './fleet/model';
import { percentile, runAll } from './fleet/sim';

const w = week();
const fmt = (s: number) => (s < 10 ? s.toFixed(1) : Math.round(s).toString()).padStart(5);
console.log(
  `A week: ${w.sessions.filter((s) => s.kind === 'single').length} single-user sessions (${w.singleUsers} users), ` +
    `${w.classes.length} classes of ${w.seatsPerCourse} seats (${w.sessions.filter((s) => s.kind === 'student').length} student sessions)\n`,
);
console.log('provider                      pool  pre-start | single p50   p95   p99 (s) | student p50   p95   p99 (s) | GPU-h idle / total');
for (const o of runAll(w)) {
  const s = o.single;
  const t = o.student;
  console.log(
    `${o.provider.padEnd(29)} ${String(o.policy.pool).padStart(4)}  ${(o.policy.prestart ? 'yes' : 'no').padEnd(9)} |` +
      `       ${fmt(percentile(s, 0.5))} ${fmt(percentile(s, 0.95))} ${fmt(percentile(s, 0.99))}     |` +
      `        ${fmt(percentile(t, 0.5))} ${fmt(percentile(t, 0.95))} ${fmt(percentile(t, 0.99))}     |` +
      ` ${o.idleGpuHours.toFixed(0).padStart(6)} / ${o.gpuHours.toFixed(0)}`,
  );
}
