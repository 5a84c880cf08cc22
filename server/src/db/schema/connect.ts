import { bigint, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const connectTickets = pgTable('connect_tickets', {
  ticketHash: text('ticket_hash').primaryKey(),
  userId: uuid('user_id').notNull(),
  machineId: uuid('machine_id').notNull(),
  expiresAt: ts('expires_at').notNull(),
  usedAt: ts('used_at'),
});

/** One gateway connection (0520): idle protection and operators read it. */
export const connectSessions = pgTable(
  'connect_sessions',
  {
    id: uuid('id').primaryKey(),
    machineId: uuid('machine_id').notNull(),
    userId: uuid('user_id').notNull(),
    openedAt: ts('opened_at').notNull(),
    closedAt: ts('closed_at'),
    lastInputAt: ts('last_input_at'),
    bytesToClient: bigint('bytes_to_client', { mode: 'number' }).notNull().default(0),
    bytesFromClient: bigint('bytes_from_client', { mode: 'number' }).notNull().default(0),
    closeReason: text('close_reason'),
    /** Refreshed by the serving process while open (0731): a stale open row belongs to a server that died. */
    aliveAt: ts('alive_at').notNull().defaultNow(),
  },
  (t) => [index('connect_sessions_machine_idx').on(t.machineId, t.openedAt)],
);

export const contactMessages = pgTable('contact_messages', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id'),
  name: text('name').notNull(),
  email: text('email').notNull(),
  query: text('query').notNull(),
  source: text('source').notNull(),
  recipient: text('recipient').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});
