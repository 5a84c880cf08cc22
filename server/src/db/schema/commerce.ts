import { bigint, boolean, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const minor = (name: string) => bigint(name, { mode: 'number' });

export const packs = pgTable(
  'packs',
  {
    packId: text('pack_id').primaryKey(),
    region: text('region').notNull(),
    platform: text('platform').notNull(),
    hours: integer('hours').notNull(),
    priceMinor: minor('price_minor').notNull(),
    currency: text('currency').notNull(),
    active: boolean('active').notNull().default(true),
    sort: integer('sort').notNull().default(0),
  },
  (t) => [index('packs_region_platform_idx').on(t.region, t.platform)],
);

export const courses = pgTable('courses', {
  id: uuid('id').primaryKey(),
  ownerUserId: uuid('owner_user_id').notNull(),
  name: text('name').notNull(),
  region: text('region').notNull(),
  platform: text('platform').notNull(),
  vms: integer('vms').notNull(),
  hoursPerMachine: integer('hours_per_machine').notNull(),
  startAt: ts('start_at').notNull(),
  endAt: ts('end_at').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const orders = pgTable('orders', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id').notNull(),
  kind: text('kind', { enum: ['single', 'course'] }).notNull(),
  packId: text('pack_id'),
  region: text('region').notNull(),
  platform: text('platform').notNull(),
  hours: integer('hours').notNull(),
  vms: integer('vms').notNull().default(1),
  startAt: ts('start_at'),
  expiresAt: ts('expires_at'),
  amountMinor: minor('amount_minor').notNull(),
  currency: text('currency').notNull(),
  status: text('status', { enum: ['pending', 'paid', 'failed', 'expired'] }).notNull().default('pending'),
  provider: text('provider').notNull(),
  providerSessionId: text('provider_session_id').unique(),
  paymentMethod: text('payment_method'),
  checkoutUrl: text('checkout_url'),
  successUrl: text('success_url').notNull(),
  cancelUrl: text('cancel_url').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  paidAt: ts('paid_at'),
  fulfilledAt: ts('fulfilled_at'),
  courseId: uuid('course_id'),
  machineId: uuid('machine_id'),
});

export const webhookEvents = pgTable('webhook_events', {
  eventId: text('event_id').primaryKey(),
  provider: text('provider').notNull(),
  type: text('type').notNull(),
  receivedAt: ts('received_at').notNull().defaultNow(),
});

/** 0210: the built-in payment provider's checkout sessions (its own truth, like Stripe's Checkout Session). */
export type BuiltinSessionStatus = 'open' | 'paid' | 'declined' | 'cancelled' | 'expired';
export const builtinCheckoutSessions = pgTable('builtin_checkout_sessions', {
  id: text('id').primaryKey(),
  orderId: uuid('order_id').notNull().unique(),
  status: text('status').$type<BuiltinSessionStatus>().notNull().default('open'),
  amountMinor: minor('amount_minor').notNull(),
  currency: text('currency').notNull(),
  description: text('description').notNull(),
  successUrl: text('success_url').notNull(),
  cancelUrl: text('cancel_url').notNull(),
  cardBrand: text('card_brand'),
  cardLast4: text('card_last4'),
  events: integer('events').notNull().default(0),
  createdAt: ts('created_at').notNull().defaultNow(),
  expiresAt: ts('expires_at').notNull(),
  completedAt: ts('completed_at'),
});

/** 0210: webhook events emitted by an in-process provider, delivered after commit with retries. */
export const paymentWebhookOutbox = pgTable('payment_webhook_outbox', {
  id: uuid('id').primaryKey(),
  provider: text('provider').notNull(),
  eventId: text('event_id').notNull().unique(),
  payload: text('payload').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
  attempts: integer('attempts').notNull().default(0),
  deliveredAt: ts('delivered_at'),
  lastError: text('last_error'),
});
