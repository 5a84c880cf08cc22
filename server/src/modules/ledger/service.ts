import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../context';

/**
 * The hours ledger (design §5). Append-only rows in minutes: a credit is a lot with an expiry; debits and expiries
 * name the lot they draw from, so a lot's remainder is its credit plus its children. Every row carries a unique
 * idempotency key, so a repeated call (a retried webhook, a re-run metering pass) never counts twice. Writers that
 * read remainders (debit, expiry) lock the machine row first, so concurrent writers on one machine never overdraw a lot.
 */
export interface Ledger {
  /** Adds a credit lot; idempotent on key (returns false when the key exists). */
  credit(q: Queryable, e: { machineId: string; minutes: number; expiresAt: Date; orderId?: string; key: string; note?: string }): Promise<boolean>;
  /** Debits one minute from the earliest-expiring live lot; idempotent on key (a repeated key answers debited=true
   *  without a second row: that minute is already paid for). debited=false and remainingMinutes=0 when nothing is left. */
  debitMinute(q: Queryable, e: { machineId: string; key: string; at: Date }): Promise<{ debited: boolean; remainingMinutes: number }>;
  /** Minutes left (live lots, not expired at `at`). */
  remainingMinutes(q: Queryable, machineId: string, at: Date): Promise<number>;
  /** Minutes ever credited to the machine's live (not yet expired) lots, for totalHours. */
  liveCreditedMinutes(q: Queryable, machineId: string, at: Date): Promise<number>;
  /** Writes expiry entries for every lot past its expires_at with minutes left; idempotent (key expiry:<lotId>). */
  expireDue(at: Date): Promise<number>;
}

async function rows<T>(q: Queryable, query: SQL): Promise<T[]> {
  return (await q.execute(query)).rows as T[];
}

/** Live lots of a machine with their remainders, earliest expiry first. */
function lotsQuery(machineId: string, at: Date): SQL {
  return sql`select l.id, l.expires_at, l.minutes as credited,
      l.minutes + coalesce((select sum(c.minutes) from ledger_entries c where c.lot_id = l.id), 0) as remaining
    from ledger_entries l
    where l.machine_id = ${machineId} and l.kind = 'credit' and l.expires_at > ${at.toISOString()}
    order by l.expires_at, l.created_at, l.id`;
}

interface LotRow {
  id: string;
  credited: number | string;
  remaining: number | string;
}

async function lockMachine(q: Queryable, machineId: string): Promise<void> {
  await q.execute(sql`select id from machines where id = ${machineId} for update`);
}

export function createLedger(db: Db): Ledger {
  const expireLot = (lotId: string, machineId: string) =>
    db.transaction(async (tx) => {
      await lockMachine(tx, machineId);
      const [left] = await rows<{ remaining: number | string }>(
        tx,
        sql`select l.minutes + coalesce((select sum(c.minutes) from ledger_entries c where c.lot_id = l.id), 0) as remaining
          from ledger_entries l where l.id = ${lotId}`,
      );
      const remaining = Number(left?.remaining ?? 0);
      if (remaining <= 0) return 0;
      const res = await rows<{ id: string }>(
        tx,
        sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
          values (${randomUUID()}, ${machineId}, 'expiry', ${-remaining}, ${lotId}, ${'expiry:' + lotId}, 'unused hours expired')
          on conflict (idempotency_key) do nothing returning id`,
      );
      return res.length;
    });

  const remainingMinutes = async (q: Queryable, machineId: string, at: Date) => {
    const lots = await rows<LotRow>(q, lotsQuery(machineId, at));
    return lots.reduce((sum, l) => sum + Math.max(0, Number(l.remaining)), 0);
  };

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
        const seen = await rows<{ id: string }>(tx, sql`select id from ledger_entries where idempotency_key = ${e.key}`);
        const lots = await rows<LotRow>(tx, lotsQuery(e.machineId, e.at));
        const left = lots.reduce((sum, l) => sum + Math.max(0, Number(l.remaining)), 0);
        if (seen.length) return { debited: true, remainingMinutes: left };
        const lot = lots.find((l) => Number(l.remaining) > 0);
        if (!lot) return { debited: false, remainingMinutes: 0 };
        await tx.execute(
          sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
            values (${randomUUID()}, ${e.machineId}, 'debit', -1, ${lot.id}, ${e.key}, ${'runtime ' + e.at.toISOString()})`,
        );
        return { debited: true, remainingMinutes: left - 1 };
      });
    },

    remainingMinutes,

    async liveCreditedMinutes(q, machineId, at) {
      const lots = await rows<LotRow>(q, lotsQuery(machineId, at));
      return lots.reduce((sum, l) => sum + Number(l.credited), 0);
    },

    async expireDue(at) {
      let written = 0;
      for (;;) {
        // Lots past expiry that still hold minutes (an expiry row brings the remainder to 0, so each lot is written once).
        const due = await rows<{ id: string; machine_id: string }>(
          db,
          sql`select l.id, l.machine_id from ledger_entries l
            where l.kind = 'credit' and l.expires_at <= ${at.toISOString()}
              and l.minutes + coalesce((select sum(c.minutes) from ledger_entries c where c.lot_id = l.id), 0) > 0
            order by l.expires_at limit 200`,
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
