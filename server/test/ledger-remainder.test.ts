import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { freshDatabase } from './harness';
import type { Database } from '../src/db/client';
import { machines, users } from '../src/db/schema/index';
import { adjust, createLedger, verifyLedger, type Ledger } from '../src/modules/ledger/service';

/**
 * The running remainder of each credit lot (ledger_lots, migrations 0650/0651) against the append-only rows, under concurrent debits,
 * credits, expiries, adjustments and replayed keys — on PGlite, and on PostgreSQL when DATABASE_URL is set.
 */
const DAY = 86_400_000;
const t0 = new Date('2030-03-01T12:00:00Z');
let database: Database;
let drop: () => Promise<void>;
let ledger: Ledger;

async function newMachine(): Promise<string> {
  const uid = randomUUID();
  await database.db.insert(users).values({ id: uid, email: `${uid}@example.com`, displayName: 'R', passwordHash: 'x' });
  const id = randomUUID();
  await database.db.insert(machines).values({ id, ownerUserId: uid, name: `M-${id.slice(0, 4)}`, region: 'UK', platform: 'Unreal Engine' });
  return id;
}

const lotsOf = async (m: string) =>
  (
    await database.db.execute(sql`select l.id, k.remaining, l.expires_at, l.minutes + coalesce((select sum(c.minutes) from ledger_entries c where c.lot_id = l.id), 0) as summed
      from ledger_entries l join ledger_lots k on k.id = l.id where l.machine_id = ${m} and l.kind = 'credit'`)
  ).rows.map((r) => ({ id: String(r.id), remaining: Number(r.remaining), summed: Number(r.summed), expiresAt: new Date(r.expires_at as string) }));
const countKind = async (m: string, kind: string) =>
  Number((await database.db.execute(sql`select count(*) as n from ledger_entries where machine_id = ${m} and kind = ${kind}`)).rows[0]!.n);

beforeAll(async () => {
  ({ database, drop } = await freshDatabase());
  ledger = createLedger(database.db);
});
afterAll(async () => drop());

describe('ledger lot remainders', () => {
  it('keep remainder == credit + children and never go below 0 under a concurrent storm with replays', async () => {
    const m = await newMachine();
    await ledger.credit(database.db, { machineId: m, minutes: 20, expiresAt: new Date(t0.getTime() + DAY), key: `a-${m}` });
    await ledger.credit(database.db, { machineId: m, minutes: 15, expiresAt: new Date(t0.getTime() + 9 * DAY), key: `b-${m}` });
    await ledger.credit(database.db, { machineId: m, minutes: 10, expiresAt: new Date(t0.getTime() - 1000), key: `old-${m}` }); // already expired
    const keys = Array.from({ length: 40 }, (_, i) => `meter:${m}:${i}`);
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 2; round++) {
      // every debit key twice (a re-run metering pass, a second server), interleaved with the other writers
      for (const [i, key] of keys.entries()) {
        work.push(ledger.debitMinute(database.db, { machineId: m, key, at: t0 }).then((r) => ({ key, ...r })));
        if (i % 10 === 3) work.push(ledger.credit(database.db, { machineId: m, minutes: 10, expiresAt: new Date(t0.getTime() + 5 * DAY), key: `late-${m}` }));
        if (i % 10 === 6) work.push(ledger.expireDue(t0));
      }
      work.push(database.db.transaction((tx) => adjust(tx, { machineId: m, minutes: 5, reason: 'goodwill', key: `adj+${m}`, at: t0 })));
      work.push(database.db.transaction((tx) => adjust(tx, { machineId: m, minutes: -3, reason: 'correction', key: `adj-${m}`, at: t0 })));
    }
    const results = await Promise.allSettled(work);
    const debitAnswers = results.flatMap((r) => (r.status === 'fulfilled' && r.value && typeof r.value === 'object' && 'key' in r.value ? [r.value as { key: string; debited: boolean; remainingMinutes: number }] : []));
    expect(debitAnswers).toHaveLength(80);
    // Only the taking adjustment may be refused (when the debits got there first); nothing else fails.
    const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect(failures.every((f) => /only \d+ minutes are left/.test(f))).toBe(true);

    expect(await verifyLedger(database.db)).toEqual([]);
    const lots = await lotsOf(m);
    for (const l of lots) {
      expect(l.remaining).toBe(l.summed);
      expect(l.remaining).toBeGreaterThanOrEqual(0);
    }
    // the expired lot was written off exactly once; the late credit counted once
    expect(await countKind(m, 'expiry')).toBe(1);
    expect(lots).toHaveLength(4);
    const debitRows = await countKind(m, 'debit');
    expect(new Set(debitAnswers.filter((d) => d.debited).map((d) => d.key)).size).toBe(debitRows);
    const adjustments = Number((await database.db.execute(sql`select coalesce(sum(minutes), 0) as s from ledger_entries where machine_id = ${m} and kind = 'adjustment'`)).rows[0]!.s);
    expect([5, 2]).toContain(adjustments);
    const live = 20 + 15 + 10 + adjustments - debitRows;
    expect(await ledger.remainingMinutes(database.db, m, t0)).toBe(live);
    expect(live).toBeGreaterThanOrEqual(0);
    // a minute refused while no lot had minutes is not a row; it could only be refused with 0 left at that moment
    expect(debitRows).toBeGreaterThanOrEqual(35);
    // the whole machine's rows sum to the remainders of all its lots (the expired one at 0)
    const sum = Number((await database.db.execute(sql`select sum(minutes) as s from ledger_entries where machine_id = ${m}`)).rows[0]!.s);
    expect(sum).toBe(lots.reduce((s, l) => s + l.remaining, 0));
  });

  it('drains to exactly 0 under concurrent debits and refuses the rest', async () => {
    const m = await newMachine();
    await ledger.credit(database.db, { machineId: m, minutes: 12, expiresAt: new Date(t0.getTime() + DAY), key: `c-${m}` });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => ledger.debitMinute(database.db, { machineId: m, key: `d-${m}-${i}`, at: t0 })));
    expect(answers.filter((a) => a.debited)).toHaveLength(12);
    expect((await lotsOf(m))[0]).toMatchObject({ remaining: 0, summed: 0 });
    expect(await verifyLedger(database.db)).toEqual([]);
  });

  it('a hand-written overdraw fails instead of taking a lot below 0; a replayed key changes nothing', async () => {
    const m = await newMachine();
    await ledger.credit(database.db, { machineId: m, minutes: 1, expiresAt: new Date(t0.getTime() + DAY), key: `e-${m}` });
    const [lot] = await lotsOf(m);
    const debit = (key: string) =>
      database.db.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key)
        values (${randomUUID()}, ${m}, 'debit', -1, ${lot!.id}, ${key}) on conflict (idempotency_key) do nothing`);
    await debit(`x-${m}`);
    await debit(`x-${m}`); // replay: no row, no change
    expect((await lotsOf(m))[0]!.remaining).toBe(0);
    await expect(debit(`y-${m}`)).rejects.toThrow();
    expect((await lotsOf(m))[0]).toMatchObject({ remaining: 0, summed: 0 });
  });

  it('adjust adds to the latest live lot, takes from the earliest, is idempotent and refuses to overdraw', async () => {
    const m = await newMachine();
    await ledger.credit(database.db, { machineId: m, minutes: 10, expiresAt: new Date(t0.getTime() + DAY), key: `f1-${m}` });
    await ledger.credit(database.db, { machineId: m, minutes: 10, expiresAt: new Date(t0.getTime() + 2 * DAY), key: `f2-${m}` });
    const run = (minutes: number, key: string) => database.db.transaction((tx) => adjust(tx, { machineId: m, minutes, reason: 'ops', key, at: t0 }));
    expect(await run(7, `g1-${m}`)).toEqual({ applied: true, remainingMinutes: 27 });
    expect(await run(7, `g1-${m}`)).toEqual({ applied: false, remainingMinutes: 27 });
    expect(await run(-15, `g2-${m}`)).toEqual({ applied: true, remainingMinutes: 12 });
    await expect(run(-13, `g3-${m}`)).rejects.toThrow(RangeError);
    const lots = (await lotsOf(m)).sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime());
    expect(lots.map((l) => l.remaining)).toEqual([0, 12]);
    // Granted: 20 bought plus the 7 added (issue 22: the total is never below what is left); taking leaves it.
    expect(await ledger.liveCreditedMinutes(database.db, m, t0)).toBe(27);
    expect(await verifyLedger(database.db)).toEqual([]);
  });

  it('verifyLedger reports a lot whose cached remainder was tampered with', async () => {
    const m = await newMachine();
    await ledger.credit(database.db, { machineId: m, minutes: 30, expiresAt: new Date(t0.getTime() + DAY), key: `h-${m}` });
    await ledger.debitMinute(database.db, { machineId: m, key: `h1-${m}`, at: t0 });
    const [lot] = await lotsOf(m);
    await database.db.execute(sql`update ledger_lots set remaining = remaining + 5 where id = ${lot!.id}`);
    expect(await verifyLedger(database.db)).toEqual([{ lotId: lot!.id, machineId: m, remaining: 34, expected: 29 }]);
    await database.db.execute(sql`update ledger_lots set remaining = remaining - 5 where id = ${lot!.id}`);
    expect(await verifyLedger(database.db)).toEqual([]);
  });
});
