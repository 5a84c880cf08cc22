import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { machines } from '../src/db/schema/index';
import { COURSE_ENDED, createMetering, HOURS_EXPIRED, HOURS_USED_UP } from '../src/modules/machines/metering';
import { fakeProvider, fakeRfbServer, machineRow, seedCourseMachines, seedMachine, seedUser } from './machines-fixtures';

const T0 = new Date('2030-03-01T09:00:20Z'); // 20 s into an epoch minute
const MIN = 60_000;

describe('runtime metering', () => {
  const clock = manualClock(T0);
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  const db = () => s.app.ctx.db;
  /** A metering pass right after the reconciler saw every online desktop running (its heartbeat). */
  const heartbeat = () => db().update(machines).set({ lastSeenAt: clock.now() }).where(sql`${machines.observed} = 'online'`);
  const meter = async () => {
    await heartbeat();
    await s.app.ctx.machines.metering.runOnce();
  };

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    s = await startTestServer({ clock, overrides: { machineProvider: fakeProvider(rfb.port) } });
  });
  afterAll(async () => {
    await s.close();
    await rfb.close();
  });

  /** A machine online since `since` with `minutes` of hours expiring at `expiresAt`. */
  async function onlineMachine(minutes: number, since: Date, expiresAt = new Date(since.getTime() + 30 * 24 * 60 * MIN)) {
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await s.app.ctx.ledger.credit(db(), { machineId: id, minutes, expiresAt, key: `test-credit:${id}` });
    await db().update(machines).set({ desired: 'running', observed: 'online', onlineSince: since }).where(sql`${machines.id} = ${id}`);
    return id;
  }

  async function debits(id: string): Promise<string[]> {
    const res = await db().execute(
      sql`select idempotency_key as k from ledger_entries where machine_id = ${id} and kind = 'debit' order by idempotency_key`,
    );
    return (res.rows as { k: string }[]).map((r) => r.k);
  }

  const key = (id: string, at: Date) => `meter:${id}:${Math.floor(at.getTime() / MIN)}`;

  it('charges one minute per started machine-minute, keyed by machine and epoch minute, never twice', async () => {
    clock.set(T0);
    const id = await onlineMachine(10, T0);
    await meter();
    expect(await debits(id)).toEqual([key(id, T0)]); // the first minute is charged when it begins
    clock.advance(59_000);
    await meter();
    await meter();
    expect(await debits(id)).toHaveLength(1);
    clock.advance(1000); // T0 + 60 s: minute 2 begins
    await meter();
    expect(await debits(id)).toEqual([key(id, T0), key(id, new Date(T0.getTime() + MIN))]);
    clock.advance(3 * MIN + 5000); // a late pass catches up on every minute it missed
    await meter();
    expect(await debits(id)).toHaveLength(5);
    expect(await s.app.ctx.ledger.remainingMinutes(db(), id, clock.now())).toBe(5);

    // A fresh metering instance (a restarted server) over the same ledger charges nothing again.
    const fresh = createMetering({ db: db(), ledger: s.app.ctx.ledger, clock, log: s.app.log, stop: async () => {} });
    await fresh.runOnce();
    expect(await debits(id)).toHaveLength(5);
  });

  it('stops the machine when a new minute finds no hours left, after using the last paid minute', async () => {
    clock.set(T0);
    const id = await onlineMachine(3, T0);
    await meter();
    clock.advance(2 * MIN); // minute 3 begins: the last paid one
    await meter();
    expect(await debits(id)).toHaveLength(3);
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'running', stopReason: null });
    clock.advance(MIN); // minute 4: nothing left
    await meter();
    expect(await debits(id)).toHaveLength(3);
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'stopped', stopReason: HOURS_USED_UP });
    expect(await s.app.ctx.ledger.remainingMinutes(db(), id, clock.now())).toBe(0);
  });

  it('stops the machine when its hours expire, even inside a paid minute', async () => {
    clock.set(T0);
    const id = await onlineMachine(60, T0, new Date(T0.getTime() + 90_000));
    await meter();
    clock.advance(MIN);
    await meter();
    expect(await debits(id)).toHaveLength(2);
    clock.advance(31_000); // T0 + 91 s: past the expiry
    await meter();
    expect(await machineRow(db(), id)).toMatchObject({ desired: 'stopped', stopReason: HOURS_EXPIRED });
    expect(await debits(id)).toHaveLength(2);
    expect(await s.app.ctx.ledger.expireDue(clock.now())).toBeGreaterThanOrEqual(1);
    expect(await s.app.ctx.ledger.remainingMinutes(db(), id, clock.now())).toBe(0);
  });

  it("stops a course's machines when the course ends, saying so", async () => {
    clock.set(T0);
    const owner = await seedUser(db(), { instructor: true });
    const { ids } = await seedCourseMachines(db(), owner.uid, 2);
    for (const id of ids) {
      await s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 600, expiresAt: new Date(T0.getTime() + 5 * MIN), key: `course:${id}` });
      await db().update(machines).set({ desired: 'running', observed: 'online', onlineSince: T0 }).where(sql`${machines.id} = ${id}`);
    }
    clock.advance(4 * MIN);
    await meter();
    expect((await machineRow(db(), ids[0]!)).desired).toBe('running');
    clock.advance(MIN);
    await meter();
    for (const id of ids) {
      expect(await machineRow(db(), id)).toMatchObject({ desired: 'stopped', stopReason: COURSE_ENDED });
      expect(await debits(id)).toHaveLength(5);
    }
  });

  it('machines that are processing or offline are never charged', async () => {
    clock.set(T0);
    const u = await seedUser(db());
    const id = await seedMachine(db(), u.uid);
    await s.app.ctx.ledger.credit(db(), { machineId: id, minutes: 5, expiresAt: new Date(T0.getTime() + 86_400_000), key: `c:${id}` });
    await db().update(machines).set({ desired: 'running', observed: 'processing', processingSince: T0 }).where(sql`${machines.id} = ${id}`);
    clock.advance(3 * MIN);
    await meter();
    expect(await debits(id)).toEqual([]);
  });
  // Last: it runs the reconciler, which from then on also converges the other tests' machines.
  it('a stop charges the minute in progress before the machine goes offline', async () => {
    clock.set(T0);
    const id = await onlineMachine(10, T0);
    await meter();
    clock.advance(MIN + 1000);
    await heartbeat(); // the desktop was seen running until the stop
    await s.app.ctx.machines.requestStop(db(), [id]);
    await s.app.ctx.machines.reconciler.runOnce();
    expect(await machineRow(db(), id)).toMatchObject({ observed: 'offline', onlineSince: null });
    expect(await debits(id)).toEqual([key(id, T0), key(id, new Date(T0.getTime() + MIN))]);
    clock.advance(5 * MIN);
    await meter();
    expect(await debits(id)).toHaveLength(2); // offline machines are not charged
  });
});
