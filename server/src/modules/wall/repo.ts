import { randomUUID } from 'node:crypto';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { courses, machines } from '../../db/schema/index';
import { SEAT_STALE_MS } from '../courses/seats';
import type { WallAnswer, WallSeat } from '@hyperdesk/contract';
import { wallHands, wallTakeovers } from './schema';

/** A take-over whose stream has not refreshed it for this long is over (its server or tab went away). */
export const TAKEOVER_STALE_MS = 20_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The course if `userId` is its instructor, else null (the caller answers 404). */
export async function ownCourse(q: Queryable, userId: string, courseId: string) {
  if (!UUID.test(courseId)) return null;
  const [c] = await q.select({ id: courses.id, name: courses.name }).from(courses).where(and(eq(courses.id, courseId), eq(courses.ownerUserId, userId)));
  return c ?? null;
}

/** The course machine if `userId` is the instructor of its course, else null. */
export async function ownMachine(q: Queryable, userId: string, machineId: string) {
  if (!UUID.test(machineId)) return null;
  const [m] = await q
    .select({ id: machines.id, courseId: machines.courseId, desired: machines.desired, observed: machines.observed })
    .from(machines)
    .innerJoin(courses, eq(courses.id, machines.courseId))
    .where(and(eq(machines.id, machineId), eq(courses.ownerUserId, userId)));
  return m?.courseId ? { ...m, courseId: m.courseId } : null;
}

const liveCut = (at: Date) => new Date(at.getTime() - TAKEOVER_STALE_MS).toISOString();

interface SeatRow {
  machine_id: string;
  machine_name: string;
  online: boolean;
  user_id: string | null;
  name: string | null;
  email: string | null;
  raised_at: string | null;
  taken_over: boolean;
}

/** Every machine of the course with who sits there (fresh seats only), their hand and a live take-over. One read. */
export async function wallSeats(q: Queryable, courseId: string, at: Date): Promise<WallSeat[]> {
  const stale = new Date(at.getTime() - SEAT_STALE_MS).toISOString();
  const res = await q.execute(sql`
    select m.id as machine_id, m.name as machine_name,
           (m.desired = 'running' and m.observed = 'online') as online,
           u.id as user_id, u.display_name as name, u.email,
           h.raised_at::text as raised_at,
           exists (select 1 from wall_takeovers t where t.machine_id = m.id and t.ended_at is null
                   and t.alive_at > ${liveCut(at)}::timestamptz) as taken_over
    from machines m
    left join seats s on s.machine_id = m.id and s.last_seen_at >= ${stale}::timestamptz
    left join users u on u.id = s.user_id
    left join wall_hands h on h.course_id = m.course_id and h.user_id = s.user_id
    where m.course_id = ${courseId}::uuid
    order by m.seq, m.name`);
  return (res.rows as unknown as SeatRow[]).map((r) => ({
    machineId: r.machine_id,
    machineName: r.machine_name,
    online: !!r.online,
    student: r.user_id ? { userId: r.user_id, name: r.name ?? '', email: r.email ?? '' } : null,
    handRaisedAt: r.raised_at ? new Date(r.raised_at).toISOString() : null,
    takenOver: !!r.taken_over,
  }));
}

/** Raised hands of students who are not sitting at one of the course's machines now. */
export async function handsAway(q: Queryable, courseId: string, seated: Set<string>): Promise<WallAnswer['handsAway']> {
  const res = await q.execute(sql`
    select h.user_id, u.display_name as name, h.raised_at::text as raised_at
    from wall_hands h join users u on u.id = h.user_id
    where h.course_id = ${courseId}::uuid order by h.raised_at`);
  return (res.rows as { user_id: string; name: string; raised_at: string }[])
    .filter((r) => !seated.has(r.user_id))
    .map((r) => ({ userId: r.user_id, name: r.name, raisedAt: new Date(r.raised_at).toISOString() }));
}

export async function setHand(q: Queryable, courseId: string, userId: string, raised: boolean, at: Date): Promise<void> {
  if (raised) await q.insert(wallHands).values({ courseId, userId, raisedAt: at }).onConflictDoNothing();
  else await q.delete(wallHands).where(and(eq(wallHands.courseId, courseId), eq(wallHands.userId, userId)));
}

export async function handRaised(q: Queryable, courseId: string, userId: string): Promise<boolean> {
  const rows = await q.select({ u: wallHands.userId }).from(wallHands).where(and(eq(wallHands.courseId, courseId), eq(wallHands.userId, userId)));
  return rows.length > 0;
}

/** The live take-over of a machine, if any. */
export async function liveTakeover(q: Queryable, machineId: string, at: Date) {
  const [t] = await q
    .select()
    .from(wallTakeovers)
    .where(and(eq(wallTakeovers.machineId, machineId), isNull(wallTakeovers.endedAt), gt(wallTakeovers.aliveAt, new Date(at.getTime() - TAKEOVER_STALE_MS))));
  return t ?? null;
}

/** Starts (or keeps) the instructor's take-over of a machine; an open row gone stale is ended first. */
export async function startTakeover(q: Queryable, t: { machineId: string; courseId: string; instructorId: string; studentId: string | null; at: Date }): Promise<void> {
  await q
    .update(wallTakeovers)
    .set({ endedAt: sql`${wallTakeovers.aliveAt} + interval '20 seconds'` })
    .where(and(eq(wallTakeovers.machineId, t.machineId), isNull(wallTakeovers.endedAt), sql`${wallTakeovers.aliveAt} <= ${liveCut(t.at)}::timestamptz`));
  await q
    .insert(wallTakeovers)
    .values({ id: randomUUID(), machineId: t.machineId, courseId: t.courseId, instructorId: t.instructorId, studentId: t.studentId, startedAt: t.at, aliveAt: t.at })
    .onConflictDoNothing();
}

/** Ends the instructor's open take-over of a machine (Give back, the watch closed, the seat changed). */
export async function endTakeover(q: Queryable, machineId: string, instructorId: string, at: Date): Promise<void> {
  await q
    .update(wallTakeovers)
    .set({ endedAt: at })
    .where(and(eq(wallTakeovers.machineId, machineId), eq(wallTakeovers.instructorId, instructorId), isNull(wallTakeovers.endedAt)));
}

/** Keeps the instructor's open take-over of a machine alive (its watch stream is open); answers whether one is open. */
export async function touchTakeover(q: Queryable, machineId: string, instructorId: string, at: Date): Promise<boolean> {
  const rows = await q
    .update(wallTakeovers)
    .set({ aliveAt: at })
    .where(and(eq(wallTakeovers.machineId, machineId), eq(wallTakeovers.instructorId, instructorId), isNull(wallTakeovers.endedAt), gt(wallTakeovers.aliveAt, new Date(at.getTime() - TAKEOVER_STALE_MS))))
    .returning({ id: wallTakeovers.id });
  return rows.length > 0;
}

/** The student's view: a live take-over of their desktop in this course (by whom), and when the last one ended. */
export async function takeoverOfStudent(q: Queryable, courseId: string, studentId: string, at: Date) {
  const res = await q.execute(sql`
    select u.display_name as by, t.started_at::text as since,
           (t.ended_at is null and t.alive_at > ${liveCut(at)}::timestamptz) as live,
           coalesce(t.ended_at, t.alive_at + interval '20 seconds')::text as ended
    from wall_takeovers t join users u on u.id = t.instructor_id
    where t.course_id = ${courseId}::uuid and t.student_id = ${studentId}::uuid
    order by t.started_at desc limit 1`);
  const r = res.rows[0] as { by: string; since: string; live: boolean; ended: string } | undefined;
  if (!r) return { takeover: null, lastEndedAt: null };
  if (r.live) return { takeover: { by: r.by, since: new Date(r.since).toISOString() }, lastEndedAt: null };
  return { takeover: null, lastEndedAt: new Date(r.ended).toISOString() };
}
