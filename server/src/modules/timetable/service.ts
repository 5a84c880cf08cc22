/**
 * Class timetable (issue 22.1): the instructor's class sessions of a course (add, change, delete; the course's owner
 * only, anyone else gets 404) and the next class of every course a user teaches or is a student of. The job that
 * starts and stops the machines around each class is ./job.ts.
 */
import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { courseTimeZone, MAX_CLASS_SESSIONS, type ClassSessionFields, type NextClass, type TimetableAnswer } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { courses } from '../../db/schema/index';
import { classSessions } from '../../db/schema/timetable';
import { Conflict, NotFound } from '../../errors';
import type { Clock } from '../../lib/clock';
import type { Principal } from '../identity/tokens';
import type { Events } from '../machines/events';
import { rosterUserIds } from '../courses/seats';
import { earliest, nextClass, sessionFromRow, type SessionTimes } from './occurrences';
import { checkSession, sessionJson, type CourseForTimetable } from './sessions';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const COURSE_OVER = 'The course has ended, so its timetable cannot change.';

export interface TimetableDeps {
  db: Db;
  clock: Clock;
  events: Pick<Events, 'publish'>;
  /** How long before a class its machines are started. */
  warmMs: number;
}

const sessionColumns = {
  id: classSessions.id,
  courseId: classSessions.courseId,
  kind: classSessions.kind,
  weekdays: classSessions.weekdays,
  onDay: classSessions.onDay,
  startMinute: classSessions.startMinute,
  endMinute: classSessions.endMinute,
  timeZone: classSessions.timeZone,
};

export const sessionsOf = (q: Queryable, courseId: string): Promise<SessionTimes[]> =>
  q.select(sessionColumns).from(classSessions).where(eq(classSessions.courseId, courseId)).orderBy(asc(classSessions.createdAt), asc(classSessions.id));

export function createTimetable(deps: TimetableDeps) {
  const { db, clock } = deps;

  /** The caller's course (locked for a change), or 404: another user's course and a malformed id look the same. */
  async function ownCourse(q: Queryable, principal: Principal, courseId: string, lock = false): Promise<CourseForTimetable> {
    if (!UUID.test(courseId)) throw new NotFound('Course not found.');
    const base = q
      .select({ id: courses.id, region: courses.region, startAt: courses.startAt, endAt: courses.endAt })
      .from(courses)
      .where(and(eq(courses.id, courseId), eq(courses.ownerUserId, principal.uid)));
    const [row] = lock ? await base.for('update') : await base;
    if (!row) throw new NotFound('Course not found.');
    return row;
  }

  async function answer(q: Queryable, course: CourseForTimetable): Promise<TimetableAnswer> {
    const now = clock.now();
    const rows = await sessionsOf(q, course.id);
    const next = earliest(rows.map((s) => nextClass(s, course, now.getTime())));
    return {
      packId: course.id,
      timeZone: courseTimeZone(course.region),
      startAt: course.startAt.toISOString(),
      endAt: course.endAt.toISOString(),
      sessions: rows.map((s) => sessionJson(s, course, now)),
      next: next ? { startAt: next.startsAt.toISOString(), endAt: next.endsAt.toISOString() } : null,
      warmMinutes: Math.round(deps.warmMs / 60_000),
    };
  }

  /** A change is read by the course's students too ("Next class"): their dashboards are told after commit. */
  async function announce(courseId: string, ownerId: string): Promise<void> {
    deps.events.publish([ownerId, ...(await rosterUserIds(db, courseId))], { type: 'balance' });
  }

  /** Runs a change of the course's timetable under the course row's lock; refused once the course is over. */
  async function change(principal: Principal, courseId: string, edit: (tx: Queryable, course: CourseForTimetable) => Promise<void>) {
    const result = await db.transaction(async (tx) => {
      const course = await ownCourse(tx, principal, courseId, true);
      if (clock.now() >= course.endAt) throw new Conflict(COURSE_OVER, 'course-ended');
      await edit(tx, course);
      return answer(tx, course);
    });
    await announce(courseId, principal.uid);
    return result;
  }

  return {
    async list(principal: Principal, courseId: string): Promise<TimetableAnswer> {
      return answer(db, await ownCourse(db, principal, courseId));
    },

    add(principal: Principal, courseId: string, fields: ClassSessionFields): Promise<TimetableAnswer> {
      return change(principal, courseId, async (tx, course) => {
        const times = checkSession(fields, course, clock.now());
        const [{ n }] = (await tx.select({ n: count() }).from(classSessions).where(eq(classSessions.courseId, course.id))) as [{ n: number }];
        if (Number(n) >= MAX_CLASS_SESSIONS) throw new Conflict(`A course can have at most ${MAX_CLASS_SESSIONS} class sessions.`, 'class-too-many');
        const now = clock.now();
        await tx.insert(classSessions).values({ id: randomUUID(), courseId: course.id, ...times, createdAt: now, updatedAt: now });
      });
    },

    update(principal: Principal, courseId: string, id: string, fields: ClassSessionFields): Promise<TimetableAnswer> {
      return change(principal, courseId, async (tx, course) => {
        const times = checkSession(fields, course, clock.now());
        const changed = UUID.test(id)
          ? await tx
              .update(classSessions)
              .set({ ...times, updatedAt: clock.now() })
              .where(and(eq(classSessions.id, id), eq(classSessions.courseId, course.id)))
              .returning({ id: classSessions.id })
          : [];
        if (!changed.length) throw new NotFound('Class session not found.');
      });
    },

    async remove(principal: Principal, courseId: string, id: string): Promise<{ id: string }> {
      await change(principal, courseId, async (tx, course) => {
        const gone = UUID.test(id)
          ? await tx.delete(classSessions).where(and(eq(classSessions.id, id), eq(classSessions.courseId, course.id))).returning({ id: classSessions.id })
          : [];
        if (!gone.length) throw new NotFound('Class session not found.');
      });
      return { id };
    },

    /**
     * The next class (not ended) of each course the user owns or is on the roster of (a proven address, the course
     * not over), as the dashboard shows it: "Next class: …".
     */
    async nextClasses(principal: Principal): Promise<NextClass[]> {
      const now = clock.now();
      const rows = (
        await db.execute(sql`
          select s.id, s.course_id, s.kind, s.weekdays, s.on_day, s.start_minute, s.end_minute, s.time_zone, c.start_at, c.end_at
          from class_sessions s join courses c on c.id = s.course_id
          where c.end_at > ${now.toISOString()}::timestamptz and (c.owner_user_id = ${principal.uid}::uuid
            or (${principal.emailVerified} and exists (select 1 from roster r where r.course_id = c.id and r.email = ${principal.email.trim().toLowerCase()})))`)
      ).rows as Record<string, unknown>[];
      const byCourse = new Map<string, (ReturnType<typeof nextClass>)[]>();
      for (const r of rows) {
        const { session, course } = sessionFromRow(r);
        byCourse.set(session.courseId, [...(byCourse.get(session.courseId) ?? []), nextClass(session, course, now.getTime())]);
      }
      const out: NextClass[] = [];
      for (const [packId, list] of byCourse) {
        const next = earliest(list);
        if (next) out.push({ packId, startAt: next.startsAt.toISOString(), endAt: next.endsAt.toISOString() });
      }
      return out;
    },
  };
}

export type Timetable = ReturnType<typeof createTimetable>;
