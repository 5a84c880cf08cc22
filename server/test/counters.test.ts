import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { freshDatabase } from './harness';
import { manualClock } from '../src/lib/clock';
import { memoryCounters, postgresCounters, type Counters } from '../src/lib/counters';
import { redisCounters } from '../src/lib/counters-redis';
import { createLimiter } from '../src/modules/identity/ratelimit';

/**
 * The rate-limit counters every replica shares: the `rate_limits` table (PGlite here, PostgreSQL with DATABASE_URL),
 * Redis (with REDIS_URL) and the in-process map, held to the same behaviour.
 */
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(async () => fresh?.drop());

const START = new Date('2030-01-01T00:00:00Z');
const kinds: [string, (clock: ReturnType<typeof manualClock>) => Counters][] = [
  ['memory', (clock) => memoryCounters(clock)],
  ['database table', (clock) => postgresCounters(fresh.database.db, clock)],
];

describe.each(kinds)('%s counters', (_name, make) => {
  it('count per key in a window that starts at the first event, and start over after it', async () => {
    const clock = manualClock(START);
    const c = make(clock);
    const key = `k-${Math.random()}`;
    expect((await c.hit(key, 60_000)).count).toBe(1);
    clock.advance(20_000);
    const w = await c.hit(key, 60_000);
    expect(w).toEqual({ count: 2, resetAt: START.getTime() + 60_000 });
    expect(await c.peek(key)).toEqual(w);
    expect(await c.peek(`${key}-other`)).toBeNull();
    clock.advance(40_000);
    expect(await c.peek(key)).toBeNull();
    expect(await c.hit(key, 60_000)).toEqual({ count: 1, resetAt: START.getTime() + 120_000 });
    await c.reset(key);
    expect(await c.peek(key)).toBeNull();
  });

  it('lose no count under concurrent hits', async () => {
    const c = make(manualClock(START));
    const key = `c-${Math.random()}`;
    const counts = await Promise.all(Array.from({ length: 40 }, () => c.hit(key, 60_000)));
    expect(counts.map((w) => w.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('sweep ended windows and keep live ones', async () => {
    const clock = manualClock(START);
    const c = make(clock);
    await c.sweep();
    await c.hit('short', 1_000);
    await c.hit('long', 60_000);
    clock.advance(5_000);
    expect(await c.sweep()).toBe(1);
    expect(await c.peek('long')).not.toBeNull();
  });

  it('back the identity limiter (limit reached at the same count)', async () => {
    const clock = manualClock(START);
    const l = createLimiter(make(clock), clock, `rule-${Math.random()}`, { limit: 3, windowMs: 60_000 });
    expect([await l.hit('ip'), await l.hit('ip'), await l.hit('ip'), await l.hit('ip')]).toEqual([true, true, true, false]);
    expect(await l.blocked('ip')).toBe(true);
    clock.advance(15_000);
    expect(await l.retryAfter('ip')).toBe(45);
  });
});

describe('the rate_limits table', () => {
  it('holds one row per key, removed once its window ended', async () => {
    const clock = manualClock(START);
    const c = postgresCounters(fresh.database.db, clock);
    for (let i = 0; i < 5; i++) await c.hit('row-key', 1_000);
    const rows = (await fresh.database.db.execute(sql`select count(*)::int as n from rate_limits where key = 'row-key'`)).rows as { n: number }[];
    expect(rows[0]!.n).toBe(1);
    clock.advance(2_000);
    await c.sweep();
    const after = (await fresh.database.db.execute(sql`select count(*)::int as n from rate_limits where key = 'row-key'`)).rows as { n: number }[];
    expect(after[0]!.n).toBe(0);
  });
});

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) console.info('counters.test.ts: Redis counters skipped (set REDIS_URL, e.g. redis://127.0.0.1:6379)');

describe.skipIf(!REDIS_URL)('Redis counters (REDIS_URL)', () => {
  const log = { warn: () => undefined };
  it('count in a window that Redis expires, shared by two clients, without losing concurrent hits', async () => {
    const clock = manualClock();
    const one = redisCounters(REDIS_URL!, clock, log);
    const two = redisCounters(REDIS_URL!, clock, log);
    const key = `test-${Math.random()}`;
    try {
      const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).hit(key, 1_000)));
      expect(counts.map((w) => w.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const w = await one.peek(key);
      expect(w?.count).toBe(20);
      expect(w!.resetAt - clock.now().getTime()).toBeLessThanOrEqual(1_000);
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await two.peek(key)).toBeNull();
      expect((await two.hit(key, 1_000)).count).toBe(1);
      await one.reset(key);
      expect(await two.peek(key)).toBeNull();
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
