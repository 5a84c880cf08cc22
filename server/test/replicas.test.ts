import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, isNull } from 'drizzle-orm';
import { startServer, type RunningServer } from '../../e2e/harness';
import { freshDatabase } from './harness';
import { openEvents, seedMachine, seedUser, signFor } from './machines-fixtures';
import { createTokens } from '../src/modules/identity/tokens';
import { createLedger } from '../src/modules/ledger/service';
import { WebSocket } from 'ws';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { connectSessions, machines } from '../src/db/schema/index';
import { CONTACT_RATE_LIMIT } from '../src/modules/contact/routes';
import { IDENTITY_LIMITS } from '../src/modules/identity/routes';
import { systemClock } from '../src/lib/clock';
import type { Database } from '../src/db/client';

/**
 * Two real server processes (the `npm start` entry point) on ONE fresh PostgreSQL database, each with its own
 * DATA_DIR and port, as behind a round-robin proxy (issue 14.4). Needs PostgreSQL: the embedded database is one
 * process by design.
 */
const POSTGRES = !!process.env.DATABASE_URL;
const LEADER_LINE = 'machine reconciler is the leader';
const DAY = 24 * 60 * 60 * 1000;

if (!POSTGRES) console.info('replicas.test.ts skipped: set DATABASE_URL (several replicas need one PostgreSQL; PGlite is one process)');

describe.skipIf(!POSTGRES)('two replicas on one PostgreSQL', () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  let database: Database;
  let a: RunningServer;
  let b: RunningServer;

  const leaders = (s: RunningServer) => s.output().split(LEADER_LINE).length - 1;

  async function userWithHours() {
    const u = await seedUser(database.db);
    const machineId = await seedMachine(database.db, u.uid);
    await createLedger(database.db).credit(database.db, { machineId, minutes: 120, expiresAt: new Date(Date.now() + 30 * DAY), key: `t:${machineId}` });
    const tokens = await createTokens(database.db, systemClock);
    return { ...u, machineId, token: await signFor(tokens, u) };
  }

  const machineOf = async (id: string) => (await database.db.select().from(machines).where(eq(machines.id, id)))[0];

  const post = (s: RunningServer, path: string, body: unknown, token?: string) =>
    fetch(s.base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { idtoken: token } : {}) },
      body: JSON.stringify(body),
    });

  async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms: number): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nA:\n${a.output().slice(-3000)}\nB:\n${b.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    fresh = await freshDatabase();
    database = fresh.database;
    const env = { LOG_LEVEL: 'info', IDLE_STOP_MINUTES: '60' };
    [a, b] = await Promise.all([
      startServer(env, { sharedDatabaseUrl: fresh.url }),
      startServer(env, { sharedDatabaseUrl: fresh.url }),
    ]);
    await until('a reconciler leader', () => leaders(a) + leaders(b) > 0, 15_000);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await fresh?.drop();
  }, 120_000);

  // The push crosses replicas (LISTEN/NOTIFY) in well under a second on a quiet host; the time is printed, not
  // asserted (a loaded CI host took 1.7 s), and the wait is only a bound on a state that must come.
  it('a machine started through replica A is announced on a dashboard connected to replica B', async () => {
    const u = await userWithHours();
    const stream = await openEvents(b.base, u.token);
    expect(stream.res.status).toBe(200);
    await until('the stream to open', () => stream.raw().includes(': connected'), 5_000);
    const t0 = performance.now();
    const res = await post(a, '/v1/user/slot', { packId: u.machineId }, u.token);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('WAIT');
    await until('the balance event on B', () => stream.events.includes('balance'), 15_000);
    console.info(`replicas: start on A -> event on B in ${(performance.now() - t0).toFixed(0)} ms`);
    await stream.close();
    await post(a, '/v1/user/slot', { packId: u.machineId, terminate: true }, u.token);
  });

  it('a connect ticket issued by one replica opens the desktop through the other (per-user sessions counted in the database)', async () => {
    const u = await userWithHours();
    expect((await post(a, '/v1/user/slot', { packId: u.machineId }, u.token)).status).toBe(200);
    await until('the machine to come online', async () => (await machineOf(u.machineId))?.observed === 'online', 120_000);
    // The ticket comes from one replica, the desktop's WebSocket goes to the other (the leader).
    const [leader, other] = leaders(a) > 0 ? [a, b] : [b, a];
    const res = await fetch(`${other.base}/v1/slot/connect?packId=${u.machineId}`, { headers: { idtoken: u.token } });
    expect(res.status).toBe(200);
    const { wsPath } = (await res.json()) as { wsPath: string };
    const ws = new WebSocket(leader.base.replace('http', 'ws') + wsPath);
    const hello = await new Promise<{ type: string }>((resolve, reject) => {
      ws.on('message', (data, binary) => {
        if (!binary) resolve(JSON.parse(data.toString()) as { type: string });
      });
      ws.on('close', (code, why) => reject(new Error(`gateway closed ${code} ${why.toString()}`)));
      ws.on('error', reject);
    });
    expect(hello.type).toBe('hello');
    const open = await database.db.select().from(connectSessions).where(and(eq(connectSessions.userId, u.uid), isNull(connectSessions.closedAt)));
    expect(open).toHaveLength(1);
    // The same ticket is spent: a second socket with it, through either replica, is refused.
    for (const s of [leader, other]) {
      const again = new WebSocket(s.base.replace('http', 'ws') + wsPath);
      const code = await new Promise<number>((resolve) => again.on('close', (c) => resolve(c)));
      expect(code).toBe(GATEWAY_CLOSE.ticketRefused);
    }
    ws.close();
    await until('the session row to close', async () => {
      const rows = await database.db.select().from(connectSessions).where(eq(connectSessions.userId, u.uid));
      return rows.length === 1 && rows[0]!.closedAt !== null;
    }, 5_000);
    // And back: a stop through B reaches a dashboard on A.
    const onA = await openEvents(a.base, u.token);
    await until('the stream on A to open', () => onA.raw().includes(': connected'), 5_000);
    expect((await post(b, '/v1/user/slot', { packId: u.machineId, terminate: true }, u.token)).status).toBe(200);
    await until('the balance event on A', () => onA.events.includes('balance'), 1_000);
    await onA.close();
  });

  it('counts a route limit (contact form) across both replicas, not per replica', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < CONTACT_RATE_LIMIT.max + 1; i++) {
      const s = i % 2 === 0 ? a : b;
      const res = await fetch(`${s.base}/v1/contact`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      statuses.push(res.status);
    }
    // Each replica alone saw at most 3 of the 6 requests: only a shared count reaches the limit of 5.
    expect(statuses.slice(0, CONTACT_RATE_LIMIT.max).every((s) => s !== 429)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });

  it('counts failed logins per address and e-mail across both replicas', async () => {
    const email = `nobody-${Date.now()}@example.com`;
    const limit = IDENTITY_LIMITS.loginFailuresPerIpEmail.limit;
    const statuses: number[] = [];
    for (let i = 0; i < limit + 1; i++) {
      const res = await post(i % 2 === 0 ? a : b, '/v1/auth/login', { email, password: 'wrong-password' });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, limit)).toEqual(Array(limit).fill(401));
    expect(statuses.at(-1)).toBe(429);
  });

  it('when the leader is killed (-9), the other replica leads within 15 s and starts a machine requested after the kill', async () => {
    const [leader, other] = leaders(a) > 0 ? [a, b] : [b, a];
    const before = leaders(other);
    const t0 = performance.now();
    leader.proc.kill('SIGKILL');
    await until('the other replica to lead', () => leaders(other) > before, 15_000);
    const took = performance.now() - t0;
    console.info(`replicas: leadership moved in ${(took / 1000).toFixed(1)} s after kill -9`);
    expect(took).toBeLessThan(15_000);

    const u = await userWithHours();
    const res = await post(other, '/v1/user/slot', { packId: u.machineId }, u.token);
    expect(res.status).toBe(200);
    const row = await until(
      'the machine to come online',
      async () => {
        const [m] = await database.db.select().from(machines).where(eq(machines.id, u.machineId));
        return m?.observed === 'online' || m?.stopReason ? m : undefined;
      },
      120_000,
    );
    expect(row.stopReason).toBeNull();
    expect(row.observed).toBe('online');
    await post(other, '/v1/user/slot', { packId: u.machineId, terminate: true }, u.token);
    await until(
      'the machine to stop',
      async () => (await database.db.select().from(machines).where(eq(machines.id, u.machineId)))[0]?.observed === 'offline',
      60_000,
    );
  }, 200_000);
});
