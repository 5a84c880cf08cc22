import { bigint, integer, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** 0810: one TOTP authenticator per user (secret encrypted; see modules/identity/totp.ts). */
export const userTotp = pgTable('user_totp', {
  userId: uuid('user_id').primaryKey(),
  secretEnc: text('secret_enc').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  confirmedAt: ts('confirmed_at'),
  lastStep: bigint('last_step', { mode: 'number' }),
});

/** 0810: single-use recovery codes, hashed. */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    userId: uuid('user_id').notNull(),
    codeHash: text('code_hash').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
);

/** 0810: a sign-in waiting for its second factor. */
export const signInChallenges = pgTable('sign_in_challenges', {
  idHash: text('id_hash').primaryKey(),
  userId: uuid('user_id').notNull(),
  method: text('method').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  expiresAt: ts('expires_at').notNull(),
  attempts: integer('attempts').notNull().default(0),
  usedAt: ts('used_at'),
});
