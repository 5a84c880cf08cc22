import type { Clock } from '../../lib/clock';
import type { Counters } from '../../lib/counters';
import { TooMany } from '../../errors';

/**
 * One identity rule (logins per IP, failures per IP+e-mail, …) over the shared counters (ctx.counters): in memory
 * on the embedded database, in PostgreSQL or Redis when several servers must count together. Windows are fixed
 * and start at a key's first event.
 */
export interface Limiter {
  /** Counts one event for key; false when the key is over its limit. */
  hit(key: string): Promise<boolean>;
  /** True when key has no events left, without counting. */
  blocked(key: string): Promise<boolean>;
  /** Seconds until key's window ends (for Retry-After); 0 without one. */
  retryAfter(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

export function createLimiter(
  counters: Counters,
  clock: Clock,
  name: string,
  rule: { limit: number; windowMs: number },
): Limiter {
  const k = (key: string) => `id:${name}:${key}`;
  return {
    async hit(key) {
      return (await counters.hit(k(key), rule.windowMs)).count <= rule.limit;
    },
    async blocked(key) {
      const w = await counters.peek(k(key));
      return !!w && w.count >= rule.limit;
    },
    async retryAfter(key) {
      const w = await counters.peek(k(key));
      return w ? Math.max(1, Math.ceil((w.resetAt - clock.now().getTime()) / 1000)) : 0;
    },
    reset: (key) => counters.reset(k(key)),
  };
}

/** The 429 every limited identity call answers (standard error body; the route adds Retry-After). */
export function tooMany(seconds: number): TooMany {
  const minutes = Math.ceil(seconds / 60);
  const wait = seconds < 90 ? `${seconds} seconds` : `${minutes} minutes`;
  return new TooMany(`Too many attempts. Please try again in ${wait}.`, 'rate-limited');
}
