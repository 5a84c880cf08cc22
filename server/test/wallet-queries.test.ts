import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { startTestServer, type TestServer } from './harness';
import { runningCourse } from './course-fixtures';
import { manualClock } from '../src/lib/clock';
import { roster } from '../src/db/schema/index';
import { seedUser } from '../src/modules/courses/fixtures/seed';
import type { Principal } from '../src/modules/identity/tokens';

/**
 * GET /v1/user/wallet/balance reads in a constant number of queries (issue 14): counted at the database client
 * (PGlite's `query`, or node-postgres' pools: the general one and the hot reads'), through real HTTP, for a single
 * user after many metered minutes, an instructor with a 40-machine course and a student. The id token check itself
 * reads nothing. On PostgreSQL that one statement is planned once per connection (issue 23).
 */
const DAY = 86_400_000;
const clock = manualClock(new Date('2030-05-04T10:00:00Z'));
let s: TestServer;
let queries = 0;

async function user(o: { instructor?: boolean } = {}) {
  const p = await seedUser(s.app.ctx.db, o);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}
async function balance(token: string) {
  queries = 0;
  const res = await s.call('GET', '/v1/user/wallet/balance', { token });
  expect(res.status).toBe(200);
  return { entries: res.body.balance as Record<string, any>[], queries };
}
const course = (owner: Principal, vms: number, hours: number) => runningCourse(s, clock, owner, vms, hours);
const debit = (machineId: string, n: number, from = 0) =>
  s.app.ctx.db.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key)
    select gen_random_uuid(), l.machine_id, 'debit', -1, l.id, 'meter:' || l.machine_id || ':' || g
    from ledger_entries l cross join generate_series(${from}::int, ${from + n - 1}::int) g where l.machine_id = ${machineId} and l.kind = 'credit'`);

const poolQuery = pg.Pool.prototype.query;
beforeAll(async () => {
  s = await startTestServer({ clock });
  if (s.database.kind === 'postgres') {
    // Every pool of this process: hot reads have connections of their own (db/client `prepared`).
    pg.Pool.prototype.query = function (this: pg.Pool, ...a: unknown[]) {
      queries++;
      return (poolQuery as (...args: unknown[]) => unknown).apply(this, a);
    } as typeof poolQuery;
    return;
  }
  const client = (s.database.db as unknown as { $client: { query: (...a: unknown[]) => unknown } }).$client;
  const query = client.query.bind(client);
  client.query = (...a: unknown[]) => {
    queries++;
    return query(...a);
  };
});
afterAll(async () => {
  pg.Pool.prototype.query = poolQuery;
  await s.close();
});

describe('balance read query count', () => {
  it('a single user: one query, with 1 machine or 3, fresh or after 20 hours of minutes', async () => {
    const u = await user();
    const machineIds: string[] = [];
    for (const region of ['UK', 'DE', 'ES']) {
      const id = (await s.app.ctx.db.execute(sql`insert into machines (id, owner_user_id, name, region, platform)
        values (gen_random_uuid(), ${u.p.uid}, ${'UE-' + region}, ${region}, 'Unreal Engine') returning id`)).rows[0]!.id as string;
      await s.app.ctx.ledger.credit(s.app.ctx.db, { machineId: id, minutes: 150 * 60, expiresAt: new Date(clock.now().getTime() + 30 * DAY), key: `c-${id}` });
      machineIds.push(id);
    }
    const fresh = await balance(u.token);
    expect(fresh.queries).toBe(1);
    expect(fresh.entries.map((e) => [e.role, e.timeLeft, e.totalHours])).toEqual([['SINGLE', 150, 150], ['SINGLE', 150, 150], ['SINGLE', 150, 150]]);

    await debit(machineIds[0]!, 1200);
    await s.app.ctx.ledger.debitMinute(s.app.ctx.db, { machineId: machineIds[0]!, key: `meter:${machineIds[0]}:1200`, at: clock.now() });
    const used = await balance(u.token);
    expect(used.queries).toBe(1);
    expect(used.entries[0]).toMatchObject({ timeLeft: 129.98, totalHours: 150 });
  });

  it('an instructor with a 40-machine course: one query, timeLeft is the least left', async () => {
    const t = await user({ instructor: true });
    const c = await course(t.p, 40, 25);
    for (const [i, id] of c.ids.entries()) await debit(id, 60 + i);
    const { entries, queries: n } = await balance(t.token);
    expect(n).toBe(1);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ role: 'INSTRUCTOR', packId: c.courseId, vms: 40, totalHours: 25, timeLeft: Math.round(((25 * 60 - 99) / 60) * 100) / 100 });
    expect(entries[0]!.seats).toHaveLength(40);
  });

  it('a student: one query', async () => {
    const t = await user({ instructor: true });
    const st = await user();
    const c = await course(t.p, 3, 10);
    await s.app.ctx.db.insert(roster).values({ courseId: c.courseId, email: st.p.email });
    const { entries, queries: n } = await balance(st.token);
    expect(n).toBe(1);
    expect(entries).toEqual([expect.objectContaining({ role: 'STUDENT', packId: c.courseId, timeLeft: 10, totalHours: 10 })]);
    expect(entries[0]!.seats).toBeUndefined();
  });

  it('one query for every kind at once: SINGLE first, then INSTRUCTOR, then STUDENT, with dates and states', async () => {
    const me = await user({ instructor: true });
    const other = await user({ instructor: true });
    const id = (await s.app.ctx.db.execute(sql`insert into machines (id, owner_user_id, name, region, platform, observed, processing_since)
      values (gen_random_uuid(), ${me.p.uid}, 'UE-UK', 'UK', 'Unreal Engine', 'processing', ${clock.now().toISOString()}::timestamptz) returning id`)).rows[0]!.id as string;
    await s.app.ctx.ledger.credit(s.app.ctx.db, { machineId: id, minutes: 90, expiresAt: new Date(clock.now().getTime() + 30 * DAY), key: `c-${id}` });
    const mine = await course(me.p, 2, 5);
    const theirs = await course(other.p, 2, 7);
    await s.app.ctx.db.insert(roster).values({ courseId: theirs.courseId, email: me.p.email });
    const { entries, queries: n } = await balance(me.token);
    expect(n).toBe(1);
    expect(entries.map((e) => [e.role, e.packId, e.totalHours])).toEqual([
      ['SINGLE', id, 1.5],
      ['INSTRUCTOR', mine.courseId, 5],
      ['STUDENT', theirs.courseId, 7],
    ]);
    expect(entries[0]).toMatchObject({ instanceStatus: 'processing', processingSince: clock.now().toISOString(), startDate: null });
    expect(entries[1]!.startDate).toBe(new Date(clock.now().getTime() - DAY).toISOString());
    expect(entries[1]!.seats).toEqual([
      { machineId: expect.any(String), machineName: expect.any(String), instanceStatus: 'offline', student: null },
      { machineId: expect.any(String), machineName: expect.any(String), instanceStatus: 'offline', student: null },
    ]);
  });

  // A young deployment's tables have no statistics (autovacuum analyzes a table once 50 rows have changed), and with
  // PostgreSQL's default plan_cache_mode a named statement was then planned anew on every execution: planning the
  // balance statement cost PostgreSQL several times what running it did (issue 23).
  it.runIf(process.env.DATABASE_URL)('on PostgreSQL the statement is planned once per connection (its generic plan), other queries as before', async () => {
    const u = await user();
    const id = (await s.app.ctx.db.execute(sql`insert into machines (id, owner_user_id, name, region, platform)
      values (gen_random_uuid(), ${u.p.uid}, 'UE-UK', 'UK', 'Unreal Engine') returning id`)).rows[0]!.id as string;
    await s.app.ctx.ledger.credit(s.app.ctx.db, { machineId: id, minutes: 600, expiresAt: new Date(clock.now().getTime() + 30 * DAY), key: `c-${id}` });
    for (let i = 0; i < 8; i++) expect((await balance(u.token)).entries).toEqual([expect.objectContaining({ role: 'SINGLE', timeLeft: 10 })]);
    // One read after another takes the same idle connection (node-postgres' pool hands out the last one returned).
    const plans = await s.database.prepared<{ name: string; generic: number; custom: number }>(
      'test_balance_plans',
      sql`select name, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where name like 'wallet\_balance\_%'`,
    );
    expect(plans).toHaveLength(1);
    expect(plans[0]!.generic).toBeGreaterThanOrEqual(8);
    expect(plans[0]!.custom).toBe(0);
    // The general pool's one-off statements keep custom plans (their parameters' values choose the plan).
    expect(await s.database.rows(sql`show plan_cache_mode`)).toEqual([{ plan_cache_mode: 'auto' }]);
  });
});
