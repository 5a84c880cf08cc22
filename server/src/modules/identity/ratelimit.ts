import type { Clock } from '../../lib/clock';
import { TooMany } from '../../errors';

/**
 * Fixed-window counters kept in memory, one map per rule. The clock is injected so windows can be tested without
 * waiting. Memory is bounded: expired windows are swept, and the oldest keys go first when a map is full.
 */
export interface Limiter {
  /** Counts one event for key; false when the key is already over its limit (the event is not counted then). */
  hit(key: string): boolean;
  /** True when key has no events left, without counting. */
  blocked(key: string): boolean;
  /** Seconds until key's window ends (for Retry-After). */
  retryAfter(key: string): number;
  reset(key: string): void;
}

const MAX_KEYS = 50_000;

export function createLimiter(clock: Clock, rule: { limit: number; windowMs: number }): Limiter {
  const windows = new Map<string, { count: number; resetAt: number }>();

  const current = (key: string) => {
    const now = clock.now().getTime();
    const w = windows.get(key);
    if (w && w.resetAt > now) return w;
    if (w) windows.delete(key);
    return undefined;
  };

  // Runs when the map is full: drops expired windows, then (under a flood of keys) the oldest tenth, so sweeps
  // stay rare and the map never exceeds MAX_KEYS.
  const sweep = () => {
    const now = clock.now().getTime();
    for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
    if (windows.size < MAX_KEYS) return;
    let drop = Math.ceil(MAX_KEYS / 10);
    for (const k of windows.keys()) {
      if (drop-- <= 0) break;
      windows.delete(k);
    }
  };

  return {
    hit(key) {
      const w = current(key);
      if (w) {
        if (w.count >= rule.limit) return false;
        w.count += 1;
        return true;
      }
      if (windows.size >= MAX_KEYS) sweep();
      windows.set(key, { count: 1, resetAt: clock.now().getTime() + rule.windowMs });
      return true;
    },
    blocked(key) {
      const w = current(key);
      return !!w && w.count >= rule.limit;
    },
    retryAfter(key) {
      const w = current(key);
      return w ? Math.max(1, Math.ceil((w.resetAt - clock.now().getTime()) / 1000)) : 0;
    },
    reset(key) {
      windows.delete(key);
    },
  };
}

/** The 429 every limited identity call answers (standard error body; the route adds Retry-After). */
export function tooMany(seconds: number): TooMany {
  const minutes = Math.ceil(seconds / 60);
  const wait = seconds < 90 ? `${seconds} seconds` : `${minutes} minutes`;
  return new TooMany(`Too many attempts. Please try again in ${wait}.`, 'rate-limited');
}
