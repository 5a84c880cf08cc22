/**
 * An instructor ends one student's session (issue 22.3): the seat is freed at once, so the gateway's next access
 * check (every few seconds) closes the student's open tab, which then says that the instructor ended it. The machine
 * keeps running; the student may connect again later and gets a seat as usual.
 */
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client';
import { machines, seatEndings, seats } from '../../db/schema/index';
import { Conflict, NotFound } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { Principal } from '../identity/tokens';
import type { RosterMembersDeps } from './roster-members';

export const NOBODY_SEATED = 'No student is connected to this machine.';
export const SESSION_ENDED_BY_INSTRUCTOR = 'Your instructor ended your session. You can connect again from your dashboard.';
/** How long after an ending a closed tab is told why (the gateway checks every few seconds). */
const ENDING_TOLD_MS = 2 * 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether the instructor ended this student's session of the course in the last minutes (the gateway's message). */
export async function endedByInstructor(q: Queryable, courseId: string, userId: string, at: Date): Promise<boolean> {
  const [row] = await q
    .select({ endedAt: seatEndings.endedAt })
    .from(seatEndings)
    .where(and(eq(seatEndings.courseId, courseId), eq(seatEndings.userId, userId), gte(seatEndings.endedAt, new Date(at.getTime() - ENDING_TOLD_MS))));
  return !!row;
}

interface Deps extends Pick<RosterMembersDeps, 'ownCourse' | 'notify'> {
  db: Db;
  clock: Clock;
}

export function createSeatSessions(deps: Deps) {
  /** Frees the seat of the course's machine `machineId` and records why; 404 for a machine not of the caller's course. */
  async function end(principal: Principal, courseId: string, machineId: string): Promise<{ ended: true }> {
    const now = deps.clock.now();
    const userId = await deps.db.transaction(async (tx) => {
      const course = await deps.ownCourse(tx, principal, courseId, true);
      if (!UUID.test(machineId)) throw new NotFound('Machine not found.');
      const [machine] = await tx.select({ id: machines.id }).from(machines).where(and(eq(machines.id, machineId), eq(machines.courseId, course.id)));
      if (!machine) throw new NotFound('Machine not found.');
      const [seat] = await tx.delete(seats).where(and(eq(seats.machineId, machineId), eq(seats.courseId, course.id))).returning({ userId: seats.userId });
      if (!seat) throw new Conflict(NOBODY_SEATED, 'seat-empty');
      await tx
        .insert(seatEndings)
        .values({ courseId: course.id, userId: seat.userId, endedAt: now })
        .onConflictDoUpdate({ target: [seatEndings.courseId, seatEndings.userId], set: { endedAt: sql`excluded.ended_at` } });
      return seat.userId;
    });
    await deps.notify(courseId, principal.uid, [userId]);
    return { ended: true };
  }

  return { end };
}
