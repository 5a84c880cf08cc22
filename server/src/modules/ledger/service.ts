import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import { debitedMinutes } from '../metrics/metrics';

/**
 * The hours ledger (design §5). Append-only rows in minutes: a credit is a lot with an expiry; debits, expiries and
 * adjustments name the lot they draw from, so a lot's remainder is its credit plus its children. Every row carries a
 * unique idempotency key, so a repeated call (a retried webhook, a re-run metering pass) never counts twice.
 *
 * Each credit lot also has a row in `ledger_lots` (migrations 0650/0651) with its `remaining`: credit + children,
 * moved by a trigger in the same statement as each child's insert, never below 0 (a check). Reads and writers use it instead of summing debits,
 * so their cost does not grow with minutes used; `verifyLedger` recomputes it from the rows. Writers that pick a lot
 * (debit, expiry, adjust) lock the machine row first, so concurrent writers on one machine never pick the same last
 * minute (a writer that did not lock gets an error from the check, never a negative remainder).
 */
export interface Ledger {
  /** Adds a credit lot; idempotent on key (returns false when the key exists). */
  credit(q: Queryable, e: { machineId: string; minutes: number; expiresAt: Date; orderId?: string; key: string; note?: string }): Promise<boolean>;
  /** Debits one minute from the earliest-expiring live lot; idempotent on key (a repeated key answers debited=true
   *  without a second row: that minute is already paid for). debited=false and remainingMinutes=0 when nothing is left. */
  debitMinute(q: Queryable, e: { machineId: string; key: string; at: Date }): Promise<{ debited: boolean; remainingMinutes: number }>;
  /** Minutes left (live lots, not expired at `at`). */
  remainingMinutes(q: Queryable, machineId: string, at: Date): Promise<number>;
  /** Minutes ever granted to the machine's live (not yet expired) lots (bought plus added by operators), for totalHours. */
  liveCreditedMinutes(q: Queryable, machineId: string, at: Date): Promise<number>;
  /** Writes expiry entries for every lot past its expires_at with minutes left; idempotent (key expiry:<lotId>). */
  expireDue(at: Date): Promise<number>;
}

async function rows<T>(q: Queryable, query: SQL): Promise<T[]> {
  return (await q.execute(query)).rows as T[];
}

async function lockMachine(q: Queryable, machineId: string): Promise<void> {
  await q.execute(sql`select id from machines where id = ${machineId} for update`);
}

/**
 * For other modules' queries: a lateral subquery answering `left_minutes` (remainders) and `total_minutes`
 * (granted: bought plus what operators added, migration 0760, so never less than what is left) of the live lots of
 * the machine `machineId` (an SQL column expression). Reads lots only (an index).
 */
export function liveLotsOf(machineId: SQL, at: Date): SQL {
  return sql`(select coalesce(sum(l.remaining), 0)::int as left_minutes, coalesce(sum(l.minutes + l.added), 0)::int as total_minutes
    from ledger_lots l where l.machine_id = ${machineId} and l.expires_at > ${at.toISOString()}::timestamptz)`;
}

/**
 * Minutes left in the live lots of each machine selected by `machineIds` (a subquery), grouped in one pass: a table
 * to join a list of machines on `machine_id`, where a lookup per machine (liveLotsOf) costs one scan per row.
 * `granted_minutes` as liveLotsOf's total; `next_expiry`: when the first of those lots with minutes left expires (the
 * sum changes then).
 */
export function liveLeftByMachine(machineIds: SQL, at: Date): SQL {
  return sql`(select l.machine_id, sum(l.remaining)::int as left_minutes, sum(l.minutes + l.added)::int as granted_minutes,
      min(l.expires_at) filter (where l.remaining > 0) as next_expiry from ledger_lots l
    where l.machine_id in (${machineIds}) and l.expires_at > ${at.toISOString()}::timestamptz group by l.machine_id)`;
}

async function liveTotals(q: Queryable, machineId: string, at: Date): Promise<{ left: number; total: number }> {
  const [r] = await rows<{ left_minutes: number | string; total_minutes: number | string }>(
    q,
    sql`select t.* from ${liveLotsOf(sql`${machineId}::uuid`, at)} t`,
  );
  return { left: Number(r?.left_minutes ?? 0), total: Number(r?.total_minutes ?? 0) };
}

export function createLedger(db: Db): Ledger {
  /** One lot's expiry: the lot's whole remainder in one row (the trigger brings it to 0). */
  const expireLot = (lotId: string, machineId: string) =>
    db.transaction(async (tx) => {
      await lockMachine(tx, machineId);
      const res = await rows<{ id: string }>(
        tx,
        sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
          select ${randomUUID()}, l.machine_id, 'expiry', -l.remaining, l.id, 'expiry:' || l.id, 'unused hours expired'
          from ledger_lots l where l.id = ${lotId} and l.remaining > 0
          on conflict (idempotency_key) do nothing returning id`,
      );
      return res.length;
    });

  return {
    async credit(q, e) {
      if (!Number.isInteger(e.minutes) || e.minutes <= 0) throw new RangeError(`credit minutes must be a positive integer: ${e.minutes}`);
      const inserted = await rows<{ id: string }>(
        q,
        sql`insert into ledger_entries (id, machine_id, kind, minutes, expires_at, order_id, idempotency_key, note)
          values (${randomUUID()}, ${e.machineId}, 'credit', ${e.minutes}, ${e.expiresAt.toISOString()}, ${e.orderId ?? null}, ${e.key}, ${e.note ?? null})
          on conflict (idempotency_key) do nothing returning id`,
      );
      return inserted.length > 0;
    },

    async debitMinute(q, e) {
      return q.transaction(async (tx) => {
        await lockMachine(tx, e.machineId);
        // One statement: pick the earliest-expiring lot with minutes left and write the debit (the trigger takes the
        // minute off that lot). Nothing is written when the key exists (a replay) or no lot has minutes.
        const inserted = await rows<{ id: string }>(
          tx,
          sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
            select ${randomUUID()}, ${e.machineId}, 'debit', -1, lot.id, ${e.key}, ${'runtime ' + e.at.toISOString()}
            from (select id from ledger_lots
              where machine_id = ${e.machineId} and expires_at > ${e.at.toISOString()}::timestamptz and remaining > 0
              order by expires_at, created_at, id limit 1) lot
            where not exists (select 1 from ledger_entries where idempotency_key = ${e.key})
            on conflict (idempotency_key) do nothing returning id`,
        );
        const { left } = await liveTotals(tx, e.machineId, e.at);
        if (inserted.length) {
          debitedMinutes.inc();
          return { debited: true, remainingMinutes: left };
        }
        const [seen] = await rows<{ id: string }>(tx, sql`select id from ledger_entries where idempotency_key = ${e.key}`);
        return seen ? { debited: true, remainingMinutes: left } : { debited: false, remainingMinutes: 0 };
      });
    },

    remainingMinutes: async (q, machineId, at) => (await liveTotals(q, machineId, at)).left,

    liveCreditedMinutes: async (q, machineId, at) => (await liveTotals(q, machineId, at)).total,

    async expireDue(at) {
      let written = 0;
      for (;;) {
        // Lots past expiry that still hold minutes (an expiry row brings the remainder to 0, so each lot is written once).
        const due = await rows<{ id: string; machine_id: string }>(
          db,
          sql`select id, machine_id from ledger_lots
            where remaining > 0 and expires_at <= ${at.toISOString()}::timestamptz
            order by expires_at limit 200`,
        );
        let batch = 0;
        for (const lot of due) batch += await expireLot(lot.id, lot.machine_id);
        written += batch;
        if (due.length < 200 || batch === 0) break;
      }
      return written;
    },
  };
}

/** The scheduled pass that writes off expired hours (one a minute; safe to run on every server at once). */
export function ledgerExpiryJob(ledger: Ledger, clock: Clock): Job {
  return { name: 'ledger-expiry', intervalMs: 60_000, runOnce: async () => void (await ledger.expireDue(clock.now())) };
}

export { adjust, verifyLedger, type Adjustment, type LedgerMismatch } from './audit';
