import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { startServer, type RunningServer } from '../../e2e/harness';
import { openDatabase, type Database } from '../src/db/client';
import { migrate } from '../src/db/migrate';
import { createTokens } from '../src/modules/identity/tokens';
import { getOrCreateSecret } from '../src/lib/secrets';
import { systemClock } from '../src/lib/clock';
import { signPayload } from '../src/modules/billing/providers/signature';
import { seedUser, type TestUser } from './commerce-fixtures';

/**
 * Webhook torture (issue 3): 100 orders on the real server process, 1,000 signed webhook deliveries with
 * duplicates, in shuffled order, 10 at a time, and a kill -9 of the server while fulfilments are in flight, then a
 * restart. Every paid order must be credited exactly once, nothing for declined ones, and the ledger total must
 * equal the hours of the paid packs.
 */
const USERS = 10;
const ORDERS_PER_USER = 10;
const DELIVERIES = 1000;
const CONCURRENCY = 10;
const SECRET_NAME = 'builtin-payments-webhook';
const PACKS = [
  { packId: 'uk-unreal-10h', hours: 10 },
  { packId: 'uk-unreal-25h', hours: 25 },
  { packId: 'de-unreal-50h', hours: 50 },
  { packId: 'in-unreal-100h', hours: 100 },
  { packId: 'es-unreal-10h', hours: 10 },
];

interface Order {
  user: TestUser;
  hours: number;
  sessionId: string;
  pays: boolean;
}
type Task = { kind: 'result'; order: Order } | { kind: 'deliver'; order: Order; eventId: string };

let server: RunningServer | undefined;
let ownDir: string | undefined;
let pgDb: Database | undefined;
afterAll(async () => {
  await pgDb?.close();
  await server?.close();
  if (ownDir) rmSync(ownDir, { recursive: true, force: true });
});

const shuffle = <T>(a: T[]): T[] => {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Users, id tokens and the webhook secret, written straight into the server's database. */
async function seed(database: Database) {
  const tokens = await createTokens(database.db, systemClock);
  const secret = await getOrCreateSecret(database.db, SECRET_NAME);
  const users: TestUser[] = [];
  for (let i = 0; i < USERS; i++) users.push(await seedUser(database.db, tokens));
  return { users, secret };
}

it('credits every paid order exactly once through duplicates, reordering, concurrency and a kill -9', async () => {
  // PGlite cannot be opened by two processes: seed its directory first, then start the server on it.
  // PostgreSQL: the harness makes a fresh database, the server migrates it, the test seeds it beside the server.
  const t0 = performance.now();
  let users: TestUser[];
  let secret: string;
  if (process.env.DATABASE_URL) {
    server = await startServer();
    pgDb = await openDatabase({ databaseUrl: server.env.DATABASE_URL });
    ({ users, secret } = await seed(pgDb));
  } else {
    ownDir = mkdtempSync(path.join(tmpdir(), 'hd-torture-'));
    const db = await openDatabase({ dataDir: ownDir });
    await migrate(db);
    ({ users, secret } = await seed(db));
    await db.close();
    server = await startServer({ DATA_DIR: ownDir });
  }
  const srv = server;
  const publicUrl = srv.env.PUBLIC_URL!;

  const setupSeconds = (performance.now() - t0) / 1000;

  // 100 orders through the API, 70 to be paid and 30 declined.
  const ordersStarted = performance.now();
  const orders: Order[] = [];
  await Promise.all(
    users.map(async (user, u) => {
      for (let i = 0; i < ORDERS_PER_USER; i++) {
        const pack = PACKS[(u + i) % PACKS.length]!;
        const res = await fetch(`${srv.base}/v1/user/wallet/recharge`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', idtoken: user.token },
          body: JSON.stringify({ packId: pack.packId, success_url: `${publicUrl}/success`, cancel_url: `${publicUrl}/failed`, price: 0 }),
        });
        expect(res.status).toBe(200);
        const { url } = (await res.json()) as { url: string };
        orders.push({ user, hours: pack.hours, sessionId: url.split('/').pop()!, pays: (u * ORDERS_PER_USER + i) % 10 < 7 });
      }
    }),
  );

  // Per order: 6 deliveries of 3 event ids nobody else sends (→ duplicates), and, once its payment happened,
  // 4 more copies of the event the server itself emitted (→ duplicates of its own delivery).
  const queue: Task[] = [];
  const later = new Map<Order, Task[]>();
  for (const order of orders) {
    queue.push({ kind: 'result', order });
    for (let k = 0; k < 6; k++) queue.push({ kind: 'deliver', order, eventId: `evt_t_${order.sessionId}_${k % 3}` });
    later.set(order, Array.from({ length: 4 }, () => ({ kind: 'deliver' as const, order, eventId: `evt_${order.sessionId}_1` })));
  }
  const orderSeconds = (performance.now() - ordersStarted) / 1000;
  shuffle(queue);
  expect(queue.length - orders.length + orders.length * 4).toBe(DELIVERIES);

  let delivered = 0;
  let duplicates = 0;
  let retried = 0;
  let inFlight = 0;
  let restarting: Promise<void> | null = null;
  let killedWith = -1;
  let restartMs = 0;

  const deliver = async (t: Extract<Task, { kind: 'deliver' }>) => {
    const type = t.order.pays ? 'checkout.session.completed' : 'checkout.session.payment_failed';
    const payload = JSON.stringify({ id: t.eventId, object: 'event', type, data: { object: { id: t.order.sessionId, object: 'checkout.session' } } });
    const res = await fetch(`${srv.base}/v1/payments/webhook/builtin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signPayload(payload, secret, new Date()) },
      body: payload,
    });
    if (res.status >= 500) throw new Error(`webhook answered ${res.status}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { duplicate: boolean };
    delivered++;
    if (body.duplicate) duplicates++;
  };
  const result = async (t: Extract<Task, { kind: 'result' }>) => {
    const form = new URLSearchParams({ number: t.order.pays ? '4242424242424242' : '4000000000000002', exp: '12/40', cvc: '123', name: 'Torture' });
    const res = await fetch(`${srv.base}/checkout/${t.order.sessionId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      redirect: 'manual',
    });
    if (res.status >= 500) throw new Error(`pay answered ${res.status}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(t.order.pays ? /\/success\?orderId=/ : /\/failed$/);
    for (const d of later.get(t.order)!) queue.splice(Math.floor(Math.random() * (queue.length + 1)), 0, d);
  };

  const killAndRestart = async () => {
    killedWith = inFlight;
    await new Promise<void>((resolve) => {
      srv.proc.once('exit', () => resolve());
      srv.proc.kill('SIGKILL');
    });
    const t = performance.now();
    await srv.restart();
    restartMs = performance.now() - t;
  };

  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const task = queue.shift();
      if (!task) {
        if (inFlight === 0) return;
        await sleep(5);
        continue;
      }
      if (restarting) await restarting;
      inFlight++;
      try {
        if (task.kind === 'result') await result(task);
        else await deliver(task);
      } catch (err) {
        if ((err as { name?: string }).name === 'AssertionError') throw err;
        retried++; // the server was killed under this request: deliver again, as a provider would
        queue.push(task);
        await (restarting ?? sleep(50));
      } finally {
        inFlight--;
      }
      // Kill the server once, about 40% of the way through, while several fulfilments are in flight.
      if (!restarting && killedWith < 0 && delivered >= DELIVERIES * 0.4 && inFlight >= CONCURRENCY / 2) {
        restarting = killAndRestart().finally(() => {
          restarting = null;
        });
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  expect(killedWith).toBeGreaterThan(0);

  // Check the books in the database (PGlite: after a clean stop, as only one process may open it).
  let db: Database;
  if (pgDb) db = pgDb;
  else {
    await srv.stop();
    db = await openDatabase({ dataDir: ownDir! });
  }
  try {
    const rows = (await db.rows<{ session: string; status: string; hours: number; credits: number; credited: number }>(sql`
      select o.provider_session_id as session, o.status, o.hours,
        (select count(*)::int from ledger_entries l where l.order_id = o.id) as credits,
        (select coalesce(sum(l.minutes), 0)::int from ledger_entries l where l.order_id = o.id) as credited
      from orders o`)).map((r) => ({ ...r, credits: Number(r.credits), credited: Number(r.credited) }));
    expect(rows).toHaveLength(orders.length);
    const bySession = new Map(rows.map((r) => [r.session, r]));
    let paidMinutes = 0;
    for (const o of orders) {
      const r = bySession.get(o.sessionId)!;
      if (o.pays) {
        expect(r).toMatchObject({ status: 'paid', credits: 1, credited: o.hours * 60 });
        paidMinutes += o.hours * 60;
      } else {
        expect(r).toMatchObject({ status: 'failed', credits: 0 });
      }
    }
    const [total] = await db.rows<{ minutes: number; entries: number }>(sql`select coalesce(sum(minutes), 0)::int as minutes, count(*)::int as entries from ledger_entries`);
    expect(Number(total!.minutes)).toBe(paidMinutes);
    expect(Number(total!.entries)).toBe(orders.filter((o) => o.pays).length);
    const [machines] = await db.rows<{ n: number; pairs: number }>(sql`select count(*)::int as n, count(distinct (owner_user_id, region, platform))::int as pairs from machines`);
    expect(Number(machines!.n)).toBe(Number(machines!.pairs));

    console.log(
      `[webhook torture, ${pgDb ? 'PostgreSQL' : 'PGlite'}] ${orders.length} orders (${orders.filter((o) => o.pays).length} paid, ` +
        `${orders.filter((o) => !o.pays).length} declined), ${delivered} deliveries acknowledged in ${seconds.toFixed(1)} s ` +
        `(${(delivered / (seconds - restartMs / 1000)).toFixed(0)} deliveries/s while up, ${(delivered / seconds).toFixed(0)}/s incl. the restart), ` +
        `${duplicates} duplicates ignored, ${retried} requests retried after kill -9 with ${killedWith} in flight, ` +
        `restart took ${(restartMs / 1000).toFixed(1)} s; setup ${setupSeconds.toFixed(1)} s, 100 checkouts ${orderSeconds.toFixed(1)} s; ` +
        `ledger total ${paidMinutes / 60} h = sum of paid packs`,
    );
  } finally {
    if (!pgDb) await db.close();
  }
}, 300_000);
