import { pgTable, primaryKey, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A student's raised hand (migration 0820). */
export const wallHands = pgTable(
  'wall_hands',
  {
    courseId: uuid('course_id').notNull(),
    userId: uuid('user_id').notNull(),
    raisedAt: ts('raised_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.courseId, t.userId] })],
);

/** Take-overs: the instructor's input reaches the machine's desktop while ended_at is null and alive_at is fresh. */
export const wallTakeovers = pgTable('wall_takeovers', {
  id: uuid('id').primaryKey(),
  machineId: uuid('machine_id').notNull(),
  courseId: uuid('course_id').notNull(),
  instructorId: uuid('instructor_id').notNull(),
  studentId: uuid('student_id'),
  startedAt: ts('started_at').notNull(),
  aliveAt: ts('alive_at').notNull(),
  endedAt: ts('ended_at'),
});
