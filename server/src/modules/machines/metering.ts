import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { machines } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import type { Ledger } from '../ledger/service';
import { inPool } from './pool';

export const MINUTE_MS = 60_000;
/**
 * How long after the desktop was last seen answering minutes may still begin and be charged: two metering ticks.
 * Past it the machine may be down (host reboot, server outage), so nothing more is charged until it is seen again.
 */
export const SEEN_GRACE_MS = 20_000;

/** The latest instant whose minute may be charged: now, unless the desktop has not been seen for a while. */
export function chargeableUntil(now: Date, lastSeenAt: Date | null, onlineSince: Date): Date {
  const seen = lastSeenAt ?? onlineSince;
  return new Date(Math.min(now.getTime(), seen.getTime() + SEEN_GRACE_MS));
}
export const HOURS_USED_UP = 'Your runtime hours are used up. Top up to keep going.';
export const HOURS_EXPIRED = 'Your hours have expired. Top up to keep going.';
/** Course machines: their hours end with the course; the instructor cannot top them up. */
export const COURSE_HOURS_USED_UP = 'This machine has used all the runtime hours of the course.';
export const COURSE_ENDED = 'The course has ended.'; // the same words as courses' own end-of-course stop

export interface Metering {
  /** One pass: charges every online machine up to now and stops those with nothing left. */
  runOnce(): Promise<void>;
  /** Charges the minutes of a machine that are due at `at`; 'empty' when a due minute found no hours left. */
  settle(machineId: string, onlineSince: Date, at: Date): Promise<'ok' | 'empty'>;
  job: Job;
}

export interface MeteringDeps {
  db: Db;
  ledger: Ledger;
  clock: Clock;
  log: { error(o: object, msg: string): void };
  /** Asks for the machines to stop (desired=stopped) with the reason the dashboard shows. */
  stop(machineIds: string[], reason: string, by: 'hours' | 'course-end'): Promise<void>;
  intervalMs?: number;
}

/**
 * Runtime metering (design §5). Only minutes that begin while the desktop is seen running are charged (issue 11.3:
 * an outage of the host or of this server must never eat a customer's hours). Minutes are charged when they begin: minute i of a session covers
 * [online_since + i min, online_since + i + 1 min) and is debited once under the key
 * `meter:<machineId>:<epoch minute of its start>`, so a repeated pass, two servers or a restart never count a
 * minute twice. A machine whose next minute finds no hours is stopped; when all its hours expired (no live lot
 * left), it is stopped at once.
 */
export function createMetering(deps: MeteringDeps): Metering {
  const { db, ledger, clock } = deps;
  /** Last minute charged per machine and session, so a pass only charges what is new. */
  const marks = new Map<string, { since: number; minute: number }>();

  async function lastMetered(machineId: string): Promise<number> {
    const res = await db.execute(
      sql`select max(split_part(idempotency_key, ':', 3)::bigint) as m from ledger_entries
        where machine_id = ${machineId} and kind = 'debit' and idempotency_key like ${`meter:${machineId}:%`}`,
    );
    const m = (res.rows[0] as { m: string | number | null } | undefined)?.m;
    return m === null || m === undefined ? -Infinity : Number(m);
  }

  async function settle(machineId: string, onlineSince: Date, at: Date): Promise<'ok' | 'empty'> {
    const since = onlineSince.getTime();
    const first = Math.floor(since / MINUTE_MS);
    const last = first + Math.floor((at.getTime() - since) / MINUTE_MS);
    const mark = marks.get(machineId);
    const from = mark && mark.since === since ? mark.minute + 1 : Math.max(first, (await lastMetered(machineId)) + 1);
    for (let m = from; m <= last; m++) {
      const r = await ledger.debitMinute(db, { machineId, key: `meter:${machineId}:${m}`, at });
      if (!r.debited) return 'empty';
      marks.set(machineId, { since, minute: m });
    }
    return 'ok';
  }

  async function meterOne(m: { id: string; onlineSince: Date; lastSeenAt: Date | null; courseId: string | null }, now: Date) {
    const outcome = await settle(m.id, m.onlineSince, chargeableUntil(now, m.lastSeenAt, m.onlineSince));
    const live = await ledger.liveCreditedMinutes(db, m.id, now);
    if (outcome === 'empty' || live === 0) {
      marks.delete(m.id);
      const expired = live === 0;
      const reason = m.courseId ? (expired ? COURSE_ENDED : COURSE_HOURS_USED_UP) : expired ? HOURS_EXPIRED : HOURS_USED_UP;
      await deps.stop([m.id], reason, reason === COURSE_ENDED ? 'course-end' : 'hours');
    }
  }

  async function runOnce() {
    const now = clock.now();
    const online = await db
      .select({ id: machines.id, onlineSince: machines.onlineSince, lastSeenAt: machines.lastSeenAt, courseId: machines.courseId })
      .from(machines)
      .where(and(eq(machines.observed, 'online'), eq(machines.desired, 'running'), isNotNull(machines.onlineSince)));
    await inPool(online, 8, async (m) => {
      try {
        await meterOne({ id: m.id, onlineSince: m.onlineSince!, lastSeenAt: m.lastSeenAt, courseId: m.courseId }, now);
      } catch (err) {
        deps.log.error({ err, machineId: m.id }, 'metering failed for a machine');
      }
    });
    for (const id of marks.keys()) if (!online.some((m) => m.id === id)) marks.delete(id);
  }

  return { runOnce, settle, job: { name: 'machines-metering', intervalMs: deps.intervalMs ?? 10_000, runOnce } };
}
