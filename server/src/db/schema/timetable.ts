import { integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A course's class session (migration 0780): weekly on some weekdays, or once on a day; minutes of the day in time_zone. */
export const classSessions = pgTable('class_sessions', {
  id: uuid('id').primaryKey(),
  courseId: uuid('course_id').notNull(),
  kind: text('kind').$type<'weekly' | 'once'>().notNull(),
  /** Bit 0 = Monday … bit 6 = Sunday (weekly sessions). */
  weekdays: integer('weekdays').notNull().default(0),
  /** YYYY-MM-DD (once sessions). */
  onDay: text('on_day'),
  startMinute: integer('start_minute').notNull(),
  endMinute: integer('end_minute').notNull(),
  timeZone: text('time_zone').notNull(),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

/** One class the timetable job started and stopped, each once (migration 0780). */
export const classRuns = pgTable(
  'class_runs',
  {
    sessionId: uuid('session_id').notNull(),
    startsAt: ts('starts_at').notNull(),
    courseId: uuid('course_id').notNull(),
    endsAt: ts('ends_at').notNull(),
    startedAt: ts('started_at'),
    machinesStarted: integer('machines_started'),
    endedAt: ts('ended_at'),
    machinesStopped: integer('machines_stopped'),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.startsAt] })],
);
