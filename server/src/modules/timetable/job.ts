/**
 * The calendar warm start (issue 22.1, docs/providers.md): a job that starts a course's machines `warmMs` before each
 * class (the provider's start time plus a margin, so they are online when it begins) and stops them when it ends,
 * with the usual idle warning to students still connected a few minutes before. Starting and stopping happen on the
 * leader only, each once per class: the class's class_runs row records the start in the same transaction as the
 * machines' start request and the stop likewise, so a second server, a repeated pass or a crash and retry finds it
 * done. The reconciler carries the requests out and metering charges as always. Start All / Stop All stay the
 * instructor's at any time; a machine the instructor stopped during a class is not started again until the next one.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { courseTimeZone } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import { transaction } from '../../db/after-commit';
import { courses, machines } from '../../db/schema/index';
import { classRuns } from '../../db/schema/timetable';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import type { Ledger } from '../ledger/service';
import type { Events } from '../machines/events';
import type { Machines } from '../machines/service';
import { assignHomes, releaseCourseSeats } from '../courses/seats';
import { classesBetween, sessionFromRow, type Occurrence } from './occurrences';

export const CLASS_ENDED = 'The class has ended.';
export const TIMETABLE_JOB_INTERVAL_MS = 15_000;
/** Students still connected are warned this long before a class ends (as the idle stop warns). */
export const CLASS_END_WARNING_MS = 5 * 60_000;
/** Students come a few minutes early: machines are online this long before the class on top of the start time. */
export const WARM_MARGIN_MS = 5 * 60_000;

/** The slowest start of a desktop per provider (docs/providers.md: local 1 min, VMs 2 min, Kubernetes 10 min). */
const PROVIDER_START_MS: Record<string, number> = { local: 60_000, lxd: 2 * 60_000, ec2: 2 * 60_000, kubernetes: 10 * 60_000 };

/** How long before a class its machines are started on this provider. */
export const warmLeadMs = (providerKind: string, marginMs = WARM_MARGIN_MS) => (PROVIDER_START_MS[providerKind] ?? 10 * 60_000) + marginMs;

export interface ClassRunnerDeps {
  db: Db;
  clock: Clock;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
  warmMs: number;
  machines: Pick<Machines, 'requestStart' | 'requestStop' | 'provider'>;
  ledger: Pick<Ledger, 'remainingMinutes'>;
  events: Pick<Events, 'publish'>;
  /**
   * This server's open desktop sessions of a machine that were not told yet are told that the class ends (and the
   * machine stops) at stopAt, shown on the course's wall clock (timeZone); answers how many were told.
   */
  warn(machineId: string, stopAt: Date, timeZone: string): number;
}

const iso = (d: Date) => sql`${d.toISOString()}::timestamptz`;

export function createClassRunner(deps: ClassRunnerDeps) {
  const { db, clock } = deps;

  /** The classes whose warm window has begun and that have not ended: [start - warm, end) holds now. */
  async function dueClasses(now: Date): Promise<Occurrence[]> {
    const horizon = new Date(now.getTime() + deps.warmMs);
    const rows = (
      await db.execute(sql`select s.id, s.course_id, s.kind, s.weekdays, s.on_day, s.start_minute, s.end_minute, s.time_zone,
          c.start_at, c.end_at
        from class_sessions s join courses c on c.id = s.course_id
        where c.end_at > ${iso(now)} and c.start_at <= ${iso(horizon)}`)
    ).rows as Record<string, unknown>[];
    return rows.flatMap((r) => {
      const { session, course } = sessionFromRow(r);
      return classesBetween(session, course, now.getTime(), horizon.getTime() + 1);
    });
  }

  /** Starts one class's machines once: answers how many machines were asked to start (null: started before). */
  async function startClass(c: Occurrence, now: Date): Promise<number | null> {
    return transaction(db, async (tx) => {
      const key = and(eq(classRuns.sessionId, c.sessionId), eq(classRuns.startsAt, c.startsAt));
      await tx.insert(classRuns).values({ sessionId: c.sessionId, startsAt: c.startsAt, courseId: c.courseId, endsAt: c.endsAt }).onConflictDoNothing();
      // A session changed since: the class ends when the timetable now says.
      await tx.update(classRuns).set({ endsAt: c.endsAt }).where(and(key, isNull(classRuns.endedAt)));
      const claimed = await tx.update(classRuns).set({ startedAt: now }).where(and(key, isNull(classRuns.startedAt))).returning({ s: classRuns.sessionId });
      if (!claimed.length) return null;
      // The course row lock orders this start with Start All / Stop All of the same course.
      const [course] = await tx.select({ endAt: courses.endAt }).from(courses).where(eq(courses.id, c.courseId)).for('update');
      const rows = await tx
        .select({ id: machines.id, desired: machines.desired, observed: machines.observed })
        .from(machines)
        .where(eq(machines.courseId, c.courseId));
      const startable: string[] = [];
      if (course && course.endAt > now) {
        for (const m of rows) {
          if (m.desired === 'running' && m.observed !== 'offline') continue;
          if ((await deps.ledger.remainingMinutes(tx, m.id, now)) > 0) startable.push(m.id);
        }
      }
      await assignHomes(tx, c.courseId, startable);
      await deps.machines.requestStart(tx, startable);
      await tx.update(classRuns).set({ machinesStarted: startable.length }).where(key);
      return startable.length;
    });
  }

  /** Stops the machines of one class that ended, once; not while another class of the course goes on. */
  async function stopClass(r: { sessionId: string; startsAt: Date; courseId: string }, now: Date): Promise<{ stopped: number; released: string[]; ownerId: string | null } | null> {
    return transaction(db, async (tx) => {
      const key = and(eq(classRuns.sessionId, r.sessionId), eq(classRuns.startsAt, r.startsAt));
      const claimed = await tx.update(classRuns).set({ endedAt: now }).where(and(key, isNull(classRuns.endedAt))).returning({ s: classRuns.sessionId });
      if (!claimed.length) return null;
      const [course] = await tx.select({ ownerId: courses.ownerUserId }).from(courses).where(eq(courses.id, r.courseId)).for('update');
      const goesOn = await tx.execute(sql`select 1 from class_runs where course_id = ${r.courseId}::uuid and started_at is not null
        and ended_at is null and ends_at > ${iso(now)} limit 1`);
      if (!course || goesOn.rows.length) {
        await tx.update(classRuns).set({ machinesStopped: 0 }).where(key);
        return { stopped: 0, released: [], ownerId: course?.ownerId ?? null };
      }
      const running = await tx.select({ id: machines.id }).from(machines).where(and(eq(machines.courseId, r.courseId), eq(machines.desired, 'running')));
      await deps.machines.requestStop(tx, running.map((m) => m.id), CLASS_ENDED, 'timetable');
      const released = running.length ? await releaseCourseSeats(tx, r.courseId) : [];
      await tx.update(classRuns).set({ machinesStopped: running.length }).where(key);
      return { stopped: running.length, released, ownerId: course.ownerId };
    });
  }

  /** Leader: starts what is due, then stops what ended (a class right after another keeps its machines running). */
  async function runLeaderPass(): Promise<{ started: number; stopped: number }> {
    const now = clock.now();
    let started = 0;
    let stopped = 0;
    const due = await dueClasses(now);
    const unavailable = due.length ? ((await deps.machines.provider.preflight?.()) ?? null) : null;
    if (unavailable) deps.log.warn({ reason: unavailable, classes: due.length }, 'classes due but no machine can start here');
    for (const c of unavailable ? [] : due) {
      const n = await startClass(c, now);
      if (n === null) continue;
      started += n;
      deps.log.info({ courseId: c.courseId, startsAt: c.startsAt, machines: n }, 'class machines started');
    }
    const ended = await db
      .select({ sessionId: classRuns.sessionId, startsAt: classRuns.startsAt, courseId: classRuns.courseId })
      .from(classRuns)
      .where(and(isNull(classRuns.endedAt), sql`${classRuns.endsAt} <= ${iso(now)}`));
    for (const r of ended) {
      const done = await stopClass(r, now);
      if (!done) continue;
      stopped += done.stopped;
      if (done.ownerId) deps.events.publish([done.ownerId, ...done.released], { type: 'balance' });
      deps.log.info({ courseId: r.courseId, startsAt: r.startsAt, machines: done.stopped }, 'class machines stopped');
    }
    return { started, stopped };
  }

  /**
   * Every server, every pass: its open sessions on machines whose class ends within the warning are told so. The
   * gateway tells each session once per stop time, so a student who connects during the last minutes is told too.
   */
  async function warnPass(): Promise<number> {
    const now = clock.now();
    const rows = (
      await db.execute(sql`select m.id, m.region, r.ends_at from class_runs r join machines m on m.course_id = r.course_id
        where r.started_at is not null and r.ended_at is null and r.ends_at > ${iso(now)}
          and r.ends_at <= ${iso(new Date(now.getTime() + CLASS_END_WARNING_MS))}
          and m.desired = 'running' and m.observed = 'online'
          and not exists (select 1 from class_runs n where n.course_id = r.course_id and n.started_at is not null
            and n.ended_at is null and n.starts_at <= r.ends_at and n.ends_at > r.ends_at)`)
    ).rows as { id: string; region: string; ends_at: string | Date }[];
    let sent = 0;
    for (const r of rows) sent += deps.warn(r.id, new Date(r.ends_at), courseTimeZone(r.region));
    return sent;
  }

  return { runLeaderPass, warnPass, dueClasses };
}

export type ClassRunner = ReturnType<typeof createClassRunner>;

/** Every TIMETABLE_JOB_INTERVAL_MS: each server warns its own sessions; the leader starts and stops. */
export function timetableJob(runner: ClassRunner, isLeader: () => boolean): Job {
  return {
    name: 'timetable',
    intervalMs: TIMETABLE_JOB_INTERVAL_MS,
    runOnce: async () => {
      if (isLeader()) await runner.runLeaderPass();
      await runner.warnPass();
    },
  };
}

