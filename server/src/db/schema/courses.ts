import { pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const roster = pgTable(
  'roster',
  {
    courseId: uuid('course_id').notNull(),
    email: text('email').notNull(),
    addedAt: ts('added_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.courseId, t.email] })],
);

export const seats = pgTable('seats', {
  machineId: uuid('machine_id').primaryKey(),
  courseId: uuid('course_id').notNull(),
  userId: uuid('user_id').notNull(),
  claimedAt: ts('claimed_at').notNull().defaultNow(),
  lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
});

/** A student's session an instructor ended (migration 0790): the gateway tells the student's tab why it closed. */
export const seatEndings = pgTable(
  'seat_endings',
  {
    courseId: uuid('course_id').notNull(),
    userId: uuid('user_id').notNull(),
    endedAt: ts('ended_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.courseId, t.userId] })],
);

/** Invitation e-mails sent (migration 0600): once a day per address and course, a daily budget per instructor. */
export const rosterInvitations = pgTable('roster_invitations', {
  courseId: uuid('course_id').notNull(),
  email: text('email').notNull(),
  instructorId: uuid('instructor_id').notNull(),
  sentAt: ts('sent_at').notNull().defaultNow(),
});

/** The (course, student) homes ever used on a course's machines; removed with the course's data (issue 11.4). */
export const courseHomes = pgTable(
  'course_homes',
  {
    courseId: uuid('course_id').notNull(),
    userId: uuid('user_id').notNull(),
    homeKey: text('home_key').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** The student's first seat on the course (null: a home given before they connected). */
    joinedAt: ts('joined_at'),
  },
  (t) => [primaryKey({ columns: [t.courseId, t.userId] })],
);
