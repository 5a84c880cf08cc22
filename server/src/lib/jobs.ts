import type { FastifyBaseLogger } from 'fastify';

/** A background loop (reconciler, metering, expiry, mail delivery); modules export theirs, main.ts runs them all. */
export interface Job {
  name: string;
  /** Runs one pass; jobs are idempotent, so a pass may be repeated or interrupted at any point. */
  runOnce(): Promise<void>;
  intervalMs: number;
}

/** Runs each job every intervalMs, never overlapping itself; stop() waits for passes in flight. */
export function startJobs(jobs: Job[], log: FastifyBaseLogger): { stop(): Promise<void> } {
  let stopped = false;
  const running = new Set<Promise<void>>();
  const timers = jobs.map((job) => {
    let busy = false;
    const tick = () => {
      if (busy || stopped) return;
      busy = true;
      const p = job
        .runOnce()
        .catch((err) => log.error({ err, job: job.name }, 'job pass failed'))
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
    setImmediate(tick);
    return setInterval(tick, job.intervalMs);
  });
  return {
    async stop() {
      stopped = true;
      timers.forEach(clearInterval);
      await Promise.allSettled([...running]);
    },
  };
}
