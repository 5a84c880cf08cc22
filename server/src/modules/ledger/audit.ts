import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client';

/** A credit lot whose cached remainder differs from credit + children (or is negative, or missing: null). */
export interface LedgerMismatch {
  lotId: string;
  machineId: string;
  remaining: number | null;
  expected: number;
}

/** Recomputes every lot's remainder from the append-only rows; an empty list means the cache equals the ledger. */
export async function verifyLedger(q: Queryable): Promise<LedgerMismatch[]> {
  const res = await q.execute(sql`
    select l.id, l.machine_id, k.remaining, l.minutes + coalesce(sum(c.minutes), 0) as expected
    from ledger_entries l left join ledger_lots k on k.id = l.id left join ledger_entries c on c.lot_id = l.id
    where l.kind = 'credit'
    group by l.id, k.remaining
    having k.remaining is distinct from l.minutes + coalesce(sum(c.minutes), 0) or k.remaining < 0
    order by l.machine_id, l.id`);
  return (res.rows as { id: string; machine_id: string; remaining: number | null; expected: number | string }[]).map((r) => ({
    lotId: r.id,
    machineId: r.machine_id,
    remaining: r.remaining === null ? null : Number(r.remaining),
    expected: Number(r.expected),
  }));
}

export interface Adjustment {
  machineId: string;
  /** Minutes to add (> 0) or take away (< 0). */
  minutes: number;
  reason: string;
  /** Idempotency key: a repeated key changes nothing. */
  key: string;
  at?: Date;
}

/**
 * An operator's correction, written as `adjustment` rows on live lots (so the remainders stay exact): added minutes
 * go to the latest-expiring live lot (timeLeft and totalHours grow: the lot's `added`, migration 0760), taken minutes come from the
 * earliest-expiring lots first, one row per lot touched (keys `key`, `key#2`, …). Refuses (RangeError) to take more
 * than is left or to add to a machine without live hours. Run inside the caller's transaction.
 */
export async function adjust(tx: Queryable, a: Adjustment): Promise<{ applied: boolean; remainingMinutes: number }> {
  if (!Number.isInteger(a.minutes) || a.minutes === 0) throw new RangeError(`adjustment minutes must be a non-zero integer: ${a.minutes}`);
  if (!a.reason.trim()) throw new RangeError('an adjustment needs a reason');
  const at = (a.at ?? new Date()).toISOString();
  const locked = await tx.execute(sql`select id from machines where id = ${a.machineId}::uuid for update`);
  if (!locked.rows.length) throw new RangeError(`no machine ${a.machineId}`);
  const lots = (
    await tx.execute(sql`select id, remaining from ledger_lots
      where machine_id = ${a.machineId}::uuid and expires_at > ${at}::timestamptz
      order by expires_at, created_at, id`)
  ).rows.map((r) => ({ id: String(r.id), remaining: Number(r.remaining) }));
  const left = lots.reduce((s, l) => s + l.remaining, 0);
  const seen = await tx.execute(sql`select 1 from ledger_entries where idempotency_key = ${a.key}`);
  if (seen.rows.length) return { applied: false, remainingMinutes: left };

  const write = (lotId: string, minutes: number, key: string) =>
    tx.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
      values (${randomUUID()}, ${a.machineId}, 'adjustment', ${minutes}, ${lotId}, ${key}, ${a.reason})`);
  if (a.minutes > 0) {
    const last = lots.at(-1);
    if (!last) throw new RangeError('this machine has no live hours to add to; sell it a pack instead');
    await write(last.id, a.minutes, a.key);
    return { applied: true, remainingMinutes: left + a.minutes };
  }
  let take = -a.minutes;
  if (take > left) throw new RangeError(`only ${left} minutes are left; cannot take ${take}`);
  let n = 0;
  for (const lot of lots) {
    if (take === 0) break;
    const part = Math.min(take, lot.remaining);
    if (part === 0) continue;
    n++;
    await write(lot.id, -part, n === 1 ? a.key : `${a.key}#${n}`);
    take -= part;
  }
  return { applied: true, remainingMinutes: left + a.minutes };
}
