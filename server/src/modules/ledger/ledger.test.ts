import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { freshDatabase } from '../../../test/harness';
import type { Database } from '../../db/client';
import { machines, users } from '../../db/schema/index';
import { manualClock } from '../../lib/clock';
import { createLedger, ledgerExpiryJob, type Ledger } from './service';

const DAY = 24 * 60 * 60_000;

describe('hours ledger', () => {
  let database: Database;
  let drop: () => Promise<void>;
  let ledger: Ledger;
  const clock = manualClock(new Date('2030-01-10T12:00:00Z'));

  const newMachine = async () => {
    const userId = randomUUID();
    await database.db.insert(users).values({ id: userId, email: `${userId}@example.com`, displayName: 'L', passwordHash: 'x' });
    const id = randomUUID();
    await database.db.insert(machines).values({ id, ownerUserId: userId, name: `UE-UK-${id.slice(0, 4)}`, region: 'UK', platform: 'Unreal Engine' });
    return id;
  };
  const entries = async (machineId: string) =>
    (await database.db.execute(sql`select kind, minutes, lot_id, idempotency_key from ledger_entries where machine_id = ${machineId} order by created_at, id`)).rows as {
      kind: string;
      minutes: number;
      lot_id: string | null;
      idempotency_key: string;
    }[];
  const total = async (machineId: string) => (await entries(machineId)).reduce((s, e) => s + Number(e.minutes), 0);
  const lotIdOf = async (key: string) =>
    ((await database.db.execute(sql`select id from ledger_entries where idempotency_key = ${key}`)).rows[0] as { id: string }).id;

  beforeAll(async () => {
    ({ database, drop } = await freshDatabase());
    ledger = createLedger(database.db);
  });
  afterAll(async () => drop());

  it('debits the earliest-expiring lot first and is idempotent on keys', async () => {
    const m = await newMachine();
    const t0 = clock.now();
    expect(await ledger.credit(database.db, { machineId: m, minutes: 600, expiresAt: new Date(t0.getTime() + 30 * DAY), key: 'lot-late' })).toBe(true);
    expect(await ledger.credit(database.db, { machineId: m, minutes: 120, expiresAt: new Date(t0.getTime() + 10 * DAY), key: 'lot-early' })).toBe(true);
    expect(await ledger.credit(database.db, { machineId: m, minutes: 120, expiresAt: new Date(t0.getTime() + 10 * DAY), key: 'lot-early' })).toBe(false);
    const early = await lotIdOf('lot-early');

    const first = await ledger.debitMinute(database.db, { machineId: m, key: 'meter:1', at: t0 });
    expect(first).toEqual({ debited: true, remainingMinutes: 719 });
    const again = await ledger.debitMinute(database.db, { machineId: m, key: 'meter:1', at: t0 });
    expect(again).toEqual({ debited: true, remainingMinutes: 719 });
    const debits = (await entries(m)).filter((e) => e.kind === 'debit');
    expect(debits).toHaveLength(1);
    expect(debits[0]!.lot_id).toBe(early);
    expect(await ledger.remainingMinutes(database.db, m, t0)).toBe(719);
    expect(await ledger.liveCreditedMinutes(database.db, m, t0)).toBe(720);
  });

  it('writes expiries once, keeps totals exact, and then draws from the next lot', async () => {
    const m = await newMachine();
    const t0 = clock.now();
    await ledger.credit(database.db, { machineId: m, minutes: 60, expiresAt: new Date(t0.getTime() + 5 * DAY), key: `a-${m}` });
    await ledger.credit(database.db, { machineId: m, minutes: 30, expiresAt: new Date(t0.getTime() + 2 * DAY), key: `b-${m}` });
    for (let i = 0; i < 10; i++) await ledger.debitMinute(database.db, { machineId: m, key: `d-${m}-${i}`, at: t0 });
    const lotB = await lotIdOf(`b-${m}`);

    const later = new Date(t0.getTime() + 2 * DAY + 1000);
    // Past lot B's expiry: its 20 minutes no longer count, even before the expiry row is written.
    expect(await ledger.remainingMinutes(database.db, m, later)).toBe(60);
    expect(await ledger.expireDue(later)).toBeGreaterThanOrEqual(1);
    expect(await ledger.expireDue(later)).toBe(0);
    const expiries = (await entries(m)).filter((e) => e.kind === 'expiry');
    expect(expiries).toEqual([{ kind: 'expiry', minutes: -20, lot_id: lotB, idempotency_key: `expiry:${lotB}` }]);
    expect(await total(m)).toBe(await ledger.remainingMinutes(database.db, m, later));

    const d = await ledger.debitMinute(database.db, { machineId: m, key: `d-${m}-late`, at: later });
    expect(d).toEqual({ debited: true, remainingMinutes: 59 });
    expect((await entries(m)).at(-1)!.lot_id).toBe(await lotIdOf(`a-${m}`));

    // The scheduled job does the same pass on the injected clock.
    clock.set(new Date(t0.getTime() + 6 * DAY));
    await ledgerExpiryJob(ledger, clock).runOnce();
    expect(await ledger.remainingMinutes(database.db, m, clock.now())).toBe(0);
    expect(await total(m)).toBe(0);
    expect(await ledger.liveCreditedMinutes(database.db, m, clock.now())).toBe(0);
    clock.set(t0);
  });

  it('refuses to debit when nothing is left and never overdraws under concurrent debits', async () => {
    const m = await newMachine();
    const t0 = clock.now();
    await ledger.credit(database.db, { machineId: m, minutes: 10, expiresAt: new Date(t0.getTime() + DAY), key: `c-${m}` });
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => ledger.debitMinute(database.db, { machineId: m, key: `cc-${m}-${i}`, at: t0 })),
    );
    expect(results.filter((r) => r.debited)).toHaveLength(10);
    expect(results.filter((r) => !r.debited).every((r) => r.remainingMinutes === 0)).toBe(true);
    expect(await ledger.remainingMinutes(database.db, m, t0)).toBe(0);
    expect(await total(m)).toBe(0);
    expect(await ledger.debitMinute(database.db, { machineId: m, key: `cc-${m}-more`, at: t0 })).toEqual({ debited: false, remainingMinutes: 0 });
  });

  it('rejects non-positive credits', async () => {
    const m = await newMachine();
    await expect(ledger.credit(database.db, { machineId: m, minutes: 0, expiresAt: clock.now(), key: `z-${m}` })).rejects.toThrow(RangeError);
  });
});
