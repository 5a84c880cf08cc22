import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export type Desired = 'running' | 'stopped';
export type Observed = 'offline' | 'processing' | 'online';
export type ResetKind = 'desktop' | 'home';
/** Who or what stopped a machine last (migration 0761; the contract's StopKind). */
export type StoppedBy = 'user' | 'instructor' | 'idle' | 'hours' | 'course-end' | 'operator' | 'failure' | 'timetable' | 'host-lost';

export const machines = pgTable('machines', {
  id: uuid('id').primaryKey(),
  ownerUserId: uuid('owner_user_id'),
  courseId: uuid('course_id'),
  seq: integer('seq').notNull().default(0),
  name: text('name').notNull(),
  region: text('region').notNull(),
  platform: text('platform').notNull(),
  desired: text('desired').$type<Desired>().notNull().default('stopped'),
  observed: text('observed').$type<Observed>().notNull().default('offline'),
  processingSince: ts('processing_since'),
  onlineSince: ts('online_since'),
  /** Last time the reconciler found the desktop answering (metering never charges past it plus a grace). */
  lastSeenAt: ts('last_seen_at'),
  stopReason: text('stop_reason'),
  stoppedBy: text('stopped_by').$type<StoppedBy>(),
  stoppedAt: ts('stopped_at'),
  provider: text('provider'),
  providerRef: jsonb('provider_ref'),
  lastStudentId: uuid('last_student_id'),
  /** The home folder the desktop should run with (course machines: the seated student's); null = the machine's own. */
  homeKey: text('home_key'),
  /** The home folder the running desktop was started with. */
  runningHomeKey: text('running_home_key'),
  /** Reset machine asked for and not yet carried out by the reconciler: 'desktop' (home kept) or 'home' (erased too). */
  resetRequested: text('reset_requested').$type<ResetKind>(),
  /** When its desktop was made ahead of its first start (migration 0860, machines/preparer.ts); null: not made yet. */
  preparedAt: ts('prepared_at'),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
  /** Course machines: a new value from one sequence whenever what the balance shows of it changes (migration 0740). */
  stateV: bigint('state_v', { mode: 'number' }).notNull().default(sql`nextval('machine_state_seq')`),
});

export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: uuid('id').primaryKey(),
    machineId: uuid('machine_id').notNull(),
    kind: text('kind', { enum: ['credit', 'debit', 'expiry', 'adjustment'] }).notNull(),
    minutes: integer('minutes').notNull(),
    lotId: uuid('lot_id'),
    expiresAt: ts('expires_at'),
    orderId: uuid('order_id'),
    idempotencyKey: text('idempotency_key').notNull().unique(),
    note: text('note'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('ledger_machine_idx').on(t.machineId), index('ledger_lot_idx').on(t.lotId)],
);

/** 0651: one row per credit lot with its running remainder (credit + children), kept by triggers on ledger inserts. */
export const ledgerLots = pgTable('ledger_lots', {
  id: uuid('id').primaryKey(),
  machineId: uuid('machine_id').notNull(),
  expiresAt: ts('expires_at').notNull(),
  minutes: integer('minutes').notNull(),
  remaining: integer('remaining').notNull(),
  /** Minutes operators added to the lot (positive adjustments, migration 0760): the total is minutes + added. */
  added: integer('added').notNull().default(0),
  createdAt: ts('created_at').notNull(),
});
