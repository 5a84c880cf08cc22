import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import type { Clock } from './clock';

/** One key's window: events counted so far (including the one just counted) and when the window ends (epoch ms). */
export interface Window {
  count: number;
  resetAt: number;
}

/**
 * Fixed-window event counters behind every rate limit (identity limiter, @fastify/rate-limit's store). A window
 * starts at a key's first event and lasts windowMs. Kept in memory (one process: the embedded database), in
 * PostgreSQL (every replica of a deployment counts in one table) or in Redis (REDIS_URL).
 */
export interface Counters {
  kind: 'memory' | 'postgres' | 'redis';
  /** Counts one event for key and answers its window after counting. */
  hit(key: string, windowMs: number): Promise<Window>;
  /** The key's live window without counting; null when it has none. */
  peek(key: string): Promise<Window | null>;
  reset(key: string): Promise<void>;
  /** Deletes windows that ended (the cleanup job); answers how many. */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

const MAX_KEYS = 50_000;

/** In one process. Memory is bounded: ended windows are swept, and the oldest keys go first when the map is full. */
export function memoryCounters(clock: Clock): Counters {
  const windows = new Map<string, Window>();
  const live = (key: string): Window | null => {
    const w = windows.get(key);
    if (w && w.resetAt > clock.now().getTime()) return w;
    if (w) windows.delete(key);
    return null;
  };
  const sweepEnded = () => {
    const now = clock.now().getTime();
    let n = 0;
    for (const [k, w] of windows) if (w.resetAt <= now && windows.delete(k)) n++;
    return n;
  };
  return {
    kind: 'memory',
    async hit(key, windowMs) {
      const w = live(key);
      if (w) {
        w.count += 1;
        return { ...w };
      }
      if (windows.size >= MAX_KEYS) {
        sweepEnded();
        // Under a flood of keys: drop the oldest tenth, so sweeps stay rare and the map never exceeds MAX_KEYS.
        let drop = windows.size >= MAX_KEYS ? Math.ceil(MAX_KEYS / 10) : 0;
        for (const k of windows.keys()) {
          if (drop-- <= 0) break;
          windows.delete(k);
        }
      }
      const fresh = { count: 1, resetAt: clock.now().getTime() + windowMs };
      windows.set(key, fresh);
      return { ...fresh };
    },
    async peek(key) {
      const w = live(key);
      return w ? { ...w } : null;
    },
    async reset(key) {
      windows.delete(key);
    },
    sweep: async () => sweepEnded(),
    close: async () => windows.clear(),
  };
}

/**
 * In the `rate_limits` table (0730), shared by every server on the database. One upsert counts an event: a row
 * whose window ended starts over at 1, so concurrent servers never lose a count (the row lock orders them).
 */
export function postgresCounters(db: Db, clock: Clock): Counters {
  const asWindow = (r: { count: number | string; reset_at: number | string }): Window => ({
    count: Number(r.count),
    resetAt: Number(r.reset_at),
  });
  return {
    kind: 'postgres',
    async hit(key, windowMs) {
      const now = clock.now();
      const ends = new Date(now.getTime() + windowMs);
      const res = await db.execute(sql`
        insert into rate_limits as r (key, window_start, expires_at, count)
        values (${key}, ${now.toISOString()}::timestamptz, ${ends.toISOString()}::timestamptz, 1)
        on conflict (key) do update set
          count = case when r.expires_at <= excluded.window_start then 1 else r.count + 1 end,
          window_start = case when r.expires_at <= excluded.window_start then excluded.window_start else r.window_start end,
          expires_at = case when r.expires_at <= excluded.window_start then excluded.expires_at else r.expires_at end
        returning count, (extract(epoch from expires_at) * 1000)::float8 as reset_at`);
      return asWindow(res.rows[0] as { count: number; reset_at: number });
    },
    async peek(key) {
      const res = await db.execute(sql`select count, (extract(epoch from expires_at) * 1000)::float8 as reset_at
        from rate_limits where key = ${key} and expires_at > ${clock.now().toISOString()}::timestamptz`);
      const row = res.rows[0] as { count: number; reset_at: number } | undefined;
      return row ? asWindow(row) : null;
    },
    async reset(key) {
      await db.execute(sql`delete from rate_limits where key = ${key}`);
    },
    async sweep() {
      const res = await db.execute(sql`delete from rate_limits where expires_at <= ${clock.now().toISOString()}::timestamptz`);
      return res.rowCount ?? (res as unknown as { affectedRows?: number }).affectedRows ?? 0;
    },
    close: async () => undefined,
  };
}
