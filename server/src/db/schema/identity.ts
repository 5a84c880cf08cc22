import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const users = pgTable('users', {
  id: uuid('id').primaryKey(),
  email: text('email').notNull().unique(),
  displayName: text('display_name').notNull(),
  passwordHash: text('password_hash').notNull(),
  instructor: boolean('instructor').notNull().default(false),
  admin: boolean('admin').notNull().default(false),
  createdAt: ts('created_at').notNull().defaultNow(),
  passwordChangedAt: ts('password_changed_at').notNull().defaultNow(),
  emailVerifiedAt: ts('email_verified_at'),
  /** 0700: set by an operator; a disabled account cannot sign in or refresh. */
  disabledAt: ts('disabled_at'),
  /** 0810: a generated first-admin password, to be changed before the console opens. */
  passwordMustChange: boolean('password_must_change').notNull().default(false),
  /** The last operator's reset of the second factor: enrolling needs an id token issued after it. */
  secondFactorResetAt: ts('second_factor_reset_at'),
});

export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    prevSecretHash: text('prev_secret_hash'),
    rotatedAt: ts('rotated_at'),
    /** 0130: the current secret sealed under the previous one (sessions.ts sealNext): the grace period's re-answer. */
    nextSecretSealed: text('next_secret_sealed'),
    /** 0810: how it was signed in, space-separated ('pwd', 'pwd otp', 'sso otp'): the id token's amr claim. */
    amr: text('amr').notNull().default('pwd'),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  privateJwk: jsonb('private_jwk').notNull(),
  publicJwk: jsonb('public_jwk').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const passwordResets = pgTable(
  'password_resets',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: uuid('user_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [index('password_resets_user_idx').on(t.userId)],
);

export const emailVerifications = pgTable(
  'email_verifications',
  {
    tokenHash: text('token_hash').primaryKey(),
    email: text('email').notNull(),
    userId: uuid('user_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [index('email_verifications_email_idx').on(t.email), index('email_verifications_expires_idx').on(t.expiresAt)],
);

export const captchaUsed = pgTable(
  'captcha_used',
  {
    signature: text('signature').primaryKey(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('captcha_used_expires_idx').on(t.expiresAt)],
);

export const secrets = pgTable('secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const mailOutbox = pgTable('mail_outbox', {
  id: uuid('id').primaryKey(),
  toAddr: text('to_addr').notNull(),
  subject: text('subject').notNull(),
  bodyText: text('body_text').notNull(),
  bodyHtml: text('body_html'),
  kind: text('kind').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  sentAt: ts('sent_at'),
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  nextAttemptAt: ts('next_attempt_at'),
  replyTo: text('reply_to'),
  claimedUntil: ts('claimed_until'),
  /** Delivery given up: a permanent refusal (5xx) or the last try failed (migration 0763). */
  failedAt: ts('failed_at'),
  /** An operator's last resend, and how many there were. */
  resentAt: ts('resent_at'),
  resends: integer('resends').notNull().default(0),
});
