import { bigint, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** 0700: the operator console's append-only audit log (written only by modules/admin/audit.ts). */
export const adminAudit = pgTable('admin_audit', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  at: ts('at').notNull().defaultNow(),
  /** 'console': an operator's account (actor_id, actor_email); 'cli': the operator CLI run by actor_os_user. */
  actorKind: text('actor_kind').$type<'console' | 'cli' | 'account'>().notNull().default('console'),
  actorId: uuid('actor_id'),
  actorEmail: text('actor_email'),
  actorOsUser: text('actor_os_user'),
  action: text('action').notNull(),
  targetType: text('target_type').notNull(),
  targetId: text('target_id').notNull(),
  before: jsonb('before'),
  after: jsonb('after'),
});
