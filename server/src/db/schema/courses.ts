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
