/**
 * Seats: which student uses which machine of a course right now (design §5).
 * The table's keys do the hard part: machine_id is the primary key (a machine holds one student) and
 * (course_id, user_id) is unique (a student holds one seat per course). A claim is a conditional insert that
 * either wins or sees someone else's row and tries the next machine, so concurrent claims never share a seat and
 * never exceed the course's VMs machines, on PostgreSQL as on PGlite, inside or outside a transaction.
 */
import { and, eq, gt, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { courseHomes, machines, seats } from '../../db/schema/index';
import { Conflict } from '../../errors';

/** A seat not seen for this long is free again (the gateway's access re-check touches open sessions' seats every few seconds). */
export const SEAT_STALE_MS = 5 * 60_000;
export const SEAT_GRACE_MS = 30_000;
export const SEATS_FULL_MESSAGE = 'All machines of this course are in use. Please try again later.';

/** The home folder a student has on a course's machines, whichever seat they get (issue 11.4). */
export const courseHomeKey = (courseId: string, userId: string) => `course-${courseId}-${userId}`;

/**
 * Points the machine at the student's home (the reconciler restarts a running desktop that has another one); `at`:
 * the student takes a seat now (their first one marks them joined), null: the home is given ahead of them.
 */
async function attachHome(q: Queryable, machineId: string, courseId: string, userId: string, at: Date | null): Promise<void> {
  const homeKey = courseHomeKey(courseId, userId);
  await q.update(machines).set({ lastStudentId: userId, homeKey }).where(eq(machines.id, machineId));
  await q.insert(courseHomes).values({ courseId, userId, homeKey, joinedAt: at }).onConflictDoNothing();
  if (at) {
    await q.update(courseHomes).set({ joinedAt: at }).where(and(eq(courseHomes.courseId, courseId), eq(courseHomes.userId, userId), isNull(courseHomes.joinedAt)));
  }
}

/**
 * Before a course's machines start (Start All, a class of the timetable): each machine in `machineIds` that no
 * student on the roster has used yet gets the home of a signed-up student who has no machine of the course yet, so
 * that student's first Connect finds the machine running with their home (claimSeat prefers the machine a student
 * used last) instead of restarting it with theirs (issue 22.5). Machines and students are paired in seat and roster
 * order. Students who sign up later still get a restart on their first Connect.
 */
export async function assignHomes(q: Queryable, courseId: string, machineIds: string[]): Promise<number> {
  if (machineIds.length === 0) return 0;
  const students = await rosterUserIds(q, courseId);
  const onList = new Set(students);
  const list = await q.select({ id: machines.id, lastStudentId: machines.lastStudentId }).from(machines).where(eq(machines.courseId, courseId)).orderBy(machines.seq);
  const housed = new Set(list.map((m) => m.lastStudentId).filter((id) => id !== null && onList.has(id)));
  const seated = new Set((await q.select({ userId: seats.userId }).from(seats).where(eq(seats.courseId, courseId))).map((r) => r.userId));
  const waiting = students.filter((id) => !housed.has(id) && !seated.has(id));
  const starting = new Set(machineIds);
  let n = 0;
  for (const m of list) {
    if (!starting.has(m.id) || (m.lastStudentId !== null && onList.has(m.lastStudentId))) continue;
    const userId = waiting.shift();
    if (!userId) break;
    await attachHome(q, m.id, courseId, userId, null);
    n++;
  }
  return n;
}

async function seatOf(q: Queryable, userId: string, courseId: string): Promise<string | null> {
  const [row] = await q
    .select({ machineId: seats.machineId })
    .from(seats)
    .where(and(eq(seats.courseId, courseId), eq(seats.userId, userId)));
  return row?.machineId ?? null;
}

/**
 * Gives the student a seat and answers its machine id: the seat they hold, else the machine they used last time
 * when free, else a free machine (ones no student has used first, then online ones, then by seat number). Refuses
 * with 409 when all are taken. The caller has checked that the user is on the course's roster.
 */
export async function claimSeat(q: Queryable, userId: string, courseId: string, at: Date = new Date()): Promise<string> {
  const stale = new Date(at.getTime() - SEAT_STALE_MS);
  for (let attempt = 0; attempt < 3; attempt++) {
    const held = await seatOf(q, userId, courseId);
    if (held) {
      await q.update(seats).set({ lastSeenAt: at }).where(and(eq(seats.machineId, held), eq(seats.userId, userId)));
      return held;
    }
    const free = await q
      .select({ id: machines.id, seatSeenAt: seats.lastSeenAt })
      .from(machines)
      .leftJoin(seats, eq(seats.machineId, machines.id))
      .where(and(eq(machines.courseId, courseId), sql`(${seats.machineId} is null or ${seats.lastSeenAt} < ${stale.toISOString()}::timestamptz)`))
      .orderBy(
        sql`(${machines.lastStudentId} is not distinct from ${userId}::uuid) desc`,
        // A machine no student has used before one that holds another student's home (given ahead by assignHomes):
        // taking that one would restart it now and again when its student comes.
        sql`(${machines.lastStudentId} is null) desc`,
        sql`(${machines.observed} = 'online') desc`,
        machines.seq,
      );
    for (const m of free) {
      if (m.seatSeenAt) await q.delete(seats).where(and(eq(seats.machineId, m.id), lt(seats.lastSeenAt, stale)));
      const won = await q
        .insert(seats)
        .values({ machineId: m.id, courseId, userId, claimedAt: at, lastSeenAt: at })
        .onConflictDoNothing()
        .returning({ machineId: seats.machineId });
      if (won.length) {
        await attachHome(q, m.id, courseId, userId, at);
        return m.id;
      }
      // Lost the race for this machine, or a concurrent claim of the same student won a seat: look again.
      const mine = await seatOf(q, userId, courseId);
      if (mine) return mine;
    }
    if (free.length === 0) break;
  }
  throw new Conflict(SEATS_FULL_MESSAGE, 'seats-full');
}

/** Keeps a seat alive while its session is open; false when the seat is no longer the user's. */
export async function touchSeat(q: Queryable, machineId: string, userId: string, at: Date = new Date()): Promise<boolean> {
  const rows = await q
    .update(seats)
    .set({ lastSeenAt: at })
    .where(and(eq(seats.machineId, machineId), eq(seats.userId, userId)))
    .returning({ machineId: seats.machineId });
  return rows.length > 0;
}

/**
 * A session on the seat ended: the seat stays the student's for SEAT_GRACE_MS (a reconnect or another open tab of
 * theirs keeps it, since every access re-check touches it), then any student may take it.
 */
export async function releaseSeatSoon(q: Queryable, machineId: string, userId: string, at: Date = new Date()): Promise<void> {
  const graceEnds = new Date(at.getTime() - SEAT_STALE_MS + SEAT_GRACE_MS);
  await q
    .update(seats)
    .set({ lastSeenAt: graceEnds })
    .where(and(eq(seats.machineId, machineId), eq(seats.userId, userId), gt(seats.lastSeenAt, graceEnds)));
}

/** The student's seat of the machine, if they hold it now (and it is not stale). */
export async function holdsSeat(q: Queryable, machineId: string, userId: string, at: Date = new Date()): Promise<boolean> {
  const [row] = await q
    .select({ lastSeenAt: seats.lastSeenAt })
    .from(seats)
    .where(and(eq(seats.machineId, machineId), eq(seats.userId, userId)));
  return !!row && row.lastSeenAt.getTime() >= at.getTime() - SEAT_STALE_MS;
}

/** Frees the student's seat of a course (disconnect, removal from the roster); answers the machine it held. */
export async function releaseSeat(q: Queryable, userId: string, courseId: string): Promise<string | null> {
  const rows = await q
    .delete(seats)
    .where(and(eq(seats.courseId, courseId), eq(seats.userId, userId)))
    .returning({ machineId: seats.machineId });
  return rows[0]?.machineId ?? null;
}

/** Frees the seats of these students (roster replaced); answers the user ids that lost one. */
export async function releaseSeatsOf(q: Queryable, courseId: string, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await q
    .delete(seats)
    .where(and(eq(seats.courseId, courseId), inArray(seats.userId, userIds)))
    .returning({ userId: seats.userId });
  return rows.map((r) => r.userId);
}

/** Frees every seat of a course (Stop All, course end); answers the user ids that held one. */
export async function releaseCourseSeats(q: Queryable, courseId: string): Promise<string[]> {
  const rows = await q.delete(seats).where(eq(seats.courseId, courseId)).returning({ userId: seats.userId });
  return rows.map((r) => r.userId);
}

/** Who sits where, for the instructor's entry: machine id → student e-mail. Stale seats count as free. */
export async function seatHolders(q: Queryable, courseIds: string[], at: Date = new Date()): Promise<Map<string, string>> {
  if (courseIds.length === 0) return new Map();
  const rows = await q.execute(sql`
    select s.machine_id, u.email from seats s join users u on u.id = s.user_id
    where s.course_id in (${sql.join(courseIds.map((id) => sql`${id}::uuid`), sql`, `)})
      and s.last_seen_at >= ${new Date(at.getTime() - SEAT_STALE_MS).toISOString()}::timestamptz`);
  return new Map((rows.rows as { machine_id: string; email: string }[]).map((r) => [r.machine_id, r.email]));
}

/** True when the e-mail is on the roster of a course that has not ended. */
export async function onRoster(q: Queryable, courseId: string, email: string, at: Date): Promise<boolean> {
  const rows = await q.execute(sql`
    select 1 from roster r join courses c on c.id = r.course_id
    where r.course_id = ${courseId}::uuid and r.email = ${email.trim().toLowerCase()} and c.end_at > ${at.toISOString()}::timestamptz`);
  return rows.rows.length > 0;
}

/**
 * Connect access for students (used by connect/access.ts canConnect):
 * - with a course id (the STUDENT entry's url): a roster member gets a seat, answered as its machine id;
 * - with a machine id (ticket grant, and the gateway's re-check every few seconds): the student must still be on
 *   the roster and hold that machine's seat; the check keeps the seat alive while the session is open.
 * Answers null when the student may not connect, and always for an unverified address (the roster names e-mails,
 * so whoever signed up first with a student's address must not get the seat).
 */
export interface Student {
  uid: string;
  email: string;
  emailVerified: boolean;
}

export async function studentSeatForCourse(q: Queryable, user: Student, courseId: string, at: Date = new Date()): Promise<string | null> {
  if (!user.emailVerified || !(await onRoster(q, courseId, user.email, at))) return null;
  return claimSeat(q, user.uid, courseId, at);
}

export async function studentKeepsSeat(
  q: Queryable,
  user: Student,
  machine: { id: string; courseId: string | null },
  at: Date = new Date(),
): Promise<boolean> {
  if (!user.emailVerified || !machine.courseId || !(await onRoster(q, machine.courseId, user.email, at))) return false;
  return touchSeat(q, machine.id, user.uid, at);
}

/** Signed-up users with a verified e-mail on the course's roster, in list order (dashboards, assignHomes). */
export async function rosterUserIds(q: Queryable, courseId: string): Promise<string[]> {
  const rows = await q.execute(
    sql`select u.id from roster r join users u on u.email = r.email where r.course_id = ${courseId}::uuid and u.email_verified_at is not null
      order by r.added_at, r.email`,
  );
  return (rows.rows as { id: string }[]).map((r) => r.id);
}
