import { boolean, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** 0800: OpenID Connect identity providers an operator added (issue 23.1). */
export const ssoProviders = pgTable('sso_providers', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull(),
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  /** AES-256-GCM (modules/sso/secret-box.ts); never answered to a browser. */
  clientSecretEnc: text('client_secret_enc').notNull(),
  allowedDomains: jsonb('allowed_domains').$type<string[]>().notNull().default([]),
  enabled: boolean('enabled').notNull().default(true),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** 0800: one sign-in through a provider in flight (single use, short-lived, bound to the browser's hd_sso cookie). */
export const ssoAttempts = pgTable(
  'sso_attempts',
  {
    stateHash: text('state_hash').primaryKey(),
    providerId: uuid('provider_id').notNull(),
    browserHash: text('browser_hash').notNull(),
    nonce: text('nonce').notNull(),
    codeVerifier: text('code_verifier').notNull(),
    intent: text('intent').$type<'login' | 'signup'>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [index('sso_attempts_expires_idx').on(t.expiresAt)],
);
