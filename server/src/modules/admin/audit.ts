import { sql } from 'drizzle-orm';
import type { AuditEntry, AuditPage } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { adminAudit } from '../../db/schema/index';
import type { Principal } from '../identity/tokens';
import { BadRequest } from '../../errors';
import { decodeCursor, iso, likeOf, pageOf } from './cursor';

export interface AuditRecord {
  action: string;
  targetType: 'user' | 'machine' | 'order' | 'ledger';
  targetId: string;
  before?: unknown;
  after?: unknown;
}

/**
 * The audit log is append-only by construction: this file is the only code touching `admin_audit`, and it has an
 * insert and a select, nothing else. (Postgres could enforce it with REVOKE UPDATE, DELETE for the server's role,
 * but PGlite has one superuser, so the guarantee is the code path.) Call it in the action's own transaction, so an
 * action and its audit row commit together.
 */
export async function recordAudit(q: Queryable, actor: Principal, r: AuditRecord, at: Date): Promise<void> {
  await q.insert(adminAudit).values({
    at,
    actorId: actor.uid,
    actorEmail: actor.email,
    action: r.action,
    targetType: r.targetType,
    targetId: r.targetId,
    before: r.before ?? null,
    after: r.after ?? null,
  });
}

type Row = { id: string | number; k: string; at: unknown; actor_id: string; actor_email: string; action: string; target_type: string; target_id: string; before: unknown; after: unknown };

/** Newest first; `q` matches the actor's e-mail, the action, the target id or a target user's e-mail. */
export async function listAudit(q: Queryable, o: { after?: string; limit: number; q?: string }): Promise<AuditPage> {
  const c = decodeCursor(o.after);
  if (c && !/^\d{1,18}$/.test(c[1])) throw new BadRequest('Invalid page cursor.', 'admin/bad-cursor');
  const like = o.q ? likeOf(o.q) : null;
  const res = await q.execute(sql`
    select id, id::text as k, at, actor_id, actor_email, action, target_type, target_id, before, after from admin_audit
    where ${c ? sql`id < ${c[1]}::bigint` : sql`true`}
      and ${like ? sql`(actor_email ilike ${like} or action ilike ${like} or target_id ilike ${like} or before->>'email' ilike ${like})` : sql`true`}
    order by id desc limit ${o.limit + 1}`);
  return pageOf(res.rows as Row[], o.limit, (r): AuditEntry => ({
    id: String(r.id),
    at: iso(r.at),
    actor: { uid: r.actor_id, email: r.actor_email },
    action: r.action,
    targetType: r.target_type,
    targetId: r.target_id,
    before: r.before ?? null,
    after: r.after ?? null,
  }));
}
