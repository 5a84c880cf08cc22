import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Shared rate-limit counters (0730): one row per key and its current window. */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  windowStart: timestamp('window_start', { withTimezone: true, mode: 'date' }).notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  count: integer('count').notNull(),
});
