import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { freshDatabase } from './harness';
import { openDatabase, type Database } from '../src/db/client';
import { createEvents, EVENTS_CHANNEL, type ServerEvent } from '../src/modules/machines/events';
import { createReconciler, LEASE_MS } from '../src/modules/machines/reconciler';
import { fakeProvider } from './machines-fixtures';
import { until } from './machines-desktops';

/**
 * The parts that let several servers share one PostgreSQL, each with its own connection pool as a separate process
 * would have: the LISTEN/NOTIFY event bus and the reconciler's leader lease. replicas.test.ts runs the whole
 * servers; this file breaks the connections on purpose.
 */
const POSTGRES = !!process.env.DATABASE_URL;
if (!POSTGRES) console.info('replicas-parts.test.ts skipped: set DATABASE_URL (LISTEN/NOTIFY and leader leases need PostgreSQL)');

const HERE = path.dirname(fileURLToPath(import.meta.url));
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe.skipIf(!POSTGRES)('replica parts on PostgreSQL', () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  let one: Database;
  let two: Database;

  beforeAll(async () => {
    fresh = await freshDatabase();
    one = await openDatabase({ databaseUrl: fresh.url });
    two = await openDatabase({ databaseUrl: fresh.url });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await fresh?.drop();
  });

  /** Backends of this test database running `what` (a statement prefix), e.g. the listeners. */
  const backends = async (what: string) =>
    (
      (await fresh.database.rows(sql`select pid from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and query ilike ${what + '%'}`)) as { pid: number }[]
    ).map((r) => r.pid);

  it('delivers an event published on one server to subscribers on another, once, in chunks for big audiences', async () => {
    const a = createEvents({ database: one, log: quiet });
    const b = createEvents({ database: two, log: quiet });
    try {
      await until('both listeners', async () => (await backends(`listen ${EVENTS_CHANNEL}`)).length >= 2);
      const onA: ServerEvent[] = [];
      const onB: string[] = [];
      a.subscribe('u1', (e) => onA.push(e));
      const many = Array.from({ length: 400 }, (_, i) => `student-${i}`);
      for (const id of ['u1', ...many]) b.subscribe(id, () => onB.push(id));
      a.publish(['u1', 'u1', ...many], { type: 'balance' });
      expect(onA).toEqual([{ type: 'balance' }]); // the publisher's own subscribers at once, not again from NOTIFY
      await until('all 401 users on the other server', () => onB.length === 401);
      await new Promise((r) => setTimeout(r, 200));
      expect(onA).toHaveLength(1);
      expect(new Set(onB).size).toBe(401);
      // Server-side wake-ups travel the same way: a start requested on a follower wakes the leader's reconciler.
      let woken = 0;
      b.onSignal('reconcile', () => woken++);
      a.signal('reconcile');
      await until('the wake-up on the other server', () => woken === 1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('reconnects a listener whose connection was killed, tells its dashboards to re-fetch, and hears later events', async () => {
    const a = createEvents({ database: one, log: quiet });
    const b = createEvents({ database: two, log: quiet });
    try {
      await until('both listeners', async () => (await backends(`listen ${EVENTS_CHANNEL}`)).length >= 2);
      const heard: ServerEvent[] = [];
      b.subscribe('u2', (e) => heard.push(e));
      await fresh.database.rows(sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike ${'listen%'}`);
      await until('the catch-up event after reconnecting', () => heard.length === 1);
      await until('both listeners back', async () => (await backends(`listen ${EVENTS_CHANNEL}`)).length >= 2);
      a.publish(['u2'], { type: 'balance' });
      await until('an event published after the reconnection', () => heard.length === 2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('moves reconciler leadership when the leader session dies, and the old leader notices on its own', async () => {
    const provider = fakeProvider(1);
    const make = (database: Database) =>
      createReconciler({ database, clock: { now: () => new Date() }, log: quiet, provider, events: createEvents(), settle: async () => undefined });
    const first = make(one);
    const second = make(two);
    try {
      await first.runOnce();
      await second.runOnce();
      expect([first.isLeader(), second.isLeader()]).toEqual([true, false]);
      // The leader's session holds the lease settings: it would be ended after LEASE_MS without a statement.
      // This database's lease only: the test files beside this one hold the same advisory key in theirs.
      const [lease] = (await fresh.database.rows(sql`select l.pid from pg_locks l
        where l.locktype = 'advisory' and l.objid = 727002 and l.granted
          and l.database = (select oid from pg_database where datname = current_database())`)) as { pid: number }[];
      expect(lease).toBeDefined();
      // A half-open or frozen leader looks like this to PostgreSQL: its session ends (here at once).
      await fresh.database.rows(sql`select pg_terminate_backend(${lease!.pid})`);
      const t0 = Date.now();
      await until('the second reconciler to lead', async () => {
        await second.runOnce();
        return second.isLeader();
      });
      await until('the old leader to notice (heartbeat)', () => !first.isLeader());
      expect(Date.now() - t0).toBeLessThan(LEASE_MS);
      await first.runOnce();
      expect(first.isLeader()).toBe(false);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('a frozen leader (SIGSTOP: its connection open but silent) loses the lease, and another server leads within 15 s', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'reconciler-child.ts')], {
      env: { ...process.env, DATABASE_URL: fresh.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const other = createReconciler({ database: two, clock: { now: () => new Date() }, log: quiet, provider: fakeProvider(1), events: createEvents(), settle: async () => undefined });
    try {
      await until('the child to lead', () => out.includes('leader'), 60_000);
      await other.runOnce();
      expect(other.isLeader()).toBe(false);
      child.kill('SIGSTOP');
      const t0 = Date.now();
      await until('this server to lead', async () => {
        await other.runOnce();
        return other.isLeader();
      }, 20_000, 500);
      const took = Date.now() - t0;
      console.info(`replicas: a frozen leader lost the lease after ${(took / 1000).toFixed(1)} s`);
      expect(took).toBeLessThan(15_000);
    } finally {
      child.kill('SIGKILL');
      await other.close();
    }
  }, 60_000);
});
