import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { courses, machines } from '../../db/schema/index';
import type { Principal } from '../identity/tokens';
import { studentKeepsSeat, studentSeatForCourse } from '../courses/seats';

export type MachineRow = typeof machines.$inferSelect;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Who may connect to a machine: the owner of a single machine, the owner (instructor) of a course machine.
 * Answers the machine, or null for everyone else — callers answer a plain 404 so nothing about the machine leaks.
 *
 * Called with the id from the balance entry's url when a ticket is issued, and again with the machine's own id
 * every few seconds while a session is open (a session ends as soon as this answers null). The classroom work adds
 * students here: a roster member connecting with a course id gets a seat's machine, and keeps it only while on
 * the roster and holding that seat.
 */
export async function canConnect(q: Queryable, principal: Principal, machineId: string): Promise<MachineRow | null> {
  if (!UUID.test(machineId)) return null;
  const [row] = await q
    .select({ machine: machines, courseOwner: courses.ownerUserId })
    .from(machines)
    .leftJoin(courses, eq(courses.id, machines.courseId))
    .where(eq(machines.id, machineId))
    .limit(1);
  if (!row) {
    // Classrooms: a STUDENT entry's url names the course; a roster member gets a seat (409 when all are taken).
    const seat = await studentSeatForCourse(q, principal, machineId);
    if (!seat) return null;
    const [m] = await q.select().from(machines).where(eq(machines.id, seat)).limit(1);
    return m ?? null;
  }
  const { machine, courseOwner } = row;
  if (machine.ownerUserId === principal.uid) return machine;
  if (machine.courseId && courseOwner === principal.uid) return machine;
  // A student keeps a course machine while on the roster and holding its seat (the re-check keeps the seat alive).
  if (machine.courseId && (await studentKeepsSeat(q, principal, machine))) return machine;
  return null;
}
