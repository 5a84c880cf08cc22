import { Readable } from 'node:stream';
import { sql, type SQL } from 'drizzle-orm';
import type { AuditEntry, AuditExportQuery, AuditPage, AuditQuery } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { adminAudit } from '../../db/schema/index';
import type { Principal } from '../identity/tokens';
import { BadRequest } from '../../errors';
import { decodeCursor, iso, likeOf, pageOf } from './cursor';

export interface AuditRecord {
  action: string;
  targetType: 'user' | 'machine' | 'order' | 'ledger' | 'mail' | 'sso-provider';
  targetId: string;
  before?: unknown;
  after?: unknown;
}

/** The operator CLI (`npm run admin`) as an actor: the OS user who ran it. */
export interface CliActor {
  kind: 'cli';
  osUser: string;
}
/** An account holder changing their own account (not an operator's action). */
export interface AccountActor {
  kind: 'account';
  uid: string;
  email: string;
}
/** Who acted: an operator's verified token in the console, the CLI, or an account holder on their own account. */
export type Actor = Principal | CliActor | AccountActor;

const isCli = (a: Actor): a is CliActor => 'kind' in a && a.kind === 'cli';
const isAccount = (a: Actor): a is AccountActor => 'kind' in a && a.kind === 'account';
const actorColumns = (a: Actor) => {
  if (isCli(a)) return { actorKind: 'cli' as const, actorOsUser: a.osUser.slice(0, 100) };
  return { actorKind: isAccount(a) ? ('account' as const) : ('console' as const), actorId: a.uid, actorEmail: a.email };
};

/**
 * The audit log is append-only by construction: this file is the only code touching `admin_audit`, and it has an
 * insert and selects, nothing else. (Postgres could enforce it with REVOKE UPDATE, DELETE for the server's role,
 * but PGlite has one superuser, so the guarantee is the code path.) Call it in the action's own transaction, so an
 * action and its audit row commit together.
 */
export async function recordAudit(q: Queryable, actor: Actor, r: AuditRecord, at: Date): Promise<void> {
  await q.insert(adminAudit).values({
    at,
    ...actorColumns(actor),
    action: r.action,
    targetType: r.targetType,
    targetId: r.targetId,
    before: r.before ?? null,
    after: r.after ?? null,
  });
}

type Row = {
  id: string | number; k: string; at: unknown; actor_kind: 'console' | 'cli' | 'account'; actor_id: string | null; actor_email: string | null;
  actor_os_user: string | null; action: string; target_type: string; target_id: string; before: unknown; after: unknown;
};

const toEntry = (r: Row): AuditEntry => ({
  id: String(r.id),
  at: iso(r.at),
  actor: { kind: r.actor_kind, uid: r.actor_id, email: r.actor_email, osUser: r.actor_os_user },
  action: r.action,
  targetType: r.target_type,
  targetId: r.target_id,
  before: r.before ?? null,
  after: r.after ?? null,
});

/** `cli:<os user>` for the CLI, the e-mail for an operator: what the actor filter and the CSV call the actor. */
const actorText = sql`case when actor_kind = 'cli' then 'cli:' || coalesce(actor_os_user, '') else actor_email end`;

/** The filters of AuditQuery as one condition. */
function where(o: AuditExportQuery): SQL {
  const terms: SQL[] = [];
  if (o.actor) terms.push(sql`${actorText} ilike ${likeOf(o.actor)}`);
  if (o.action) terms.push(sql`action like ${`${likeOf(o.action).slice(1, -1)}%`}`);
  if (o.target) {
    const like = likeOf(o.target);
    terms.push(sql`(target_id = ${o.target} or before->>'email' ilike ${like} or after->>'email' ilike ${like})`);
  }
  if (o.q) {
    const like = likeOf(o.q);
    terms.push(sql`(${actorText} ilike ${like} or action ilike ${like} or target_id ilike ${like} or before->>'email' ilike ${like})`);
  }
  return terms.length ? sql.join(terms, sql` and `) : sql`true`;
}

const select = (cond: SQL, limit: number) => sql`
  select id, id::text as k, at, actor_kind, actor_id, actor_email, actor_os_user, action, target_type, target_id, before, after
  from admin_audit where ${cond} order by id desc limit ${limit}`;

/** Newest first, filtered by actor, action prefix and target (and `q` over all of them). */
export async function listAudit(q: Queryable, o: AuditQuery): Promise<AuditPage> {
  const c = decodeCursor(o.after);
  if (c && !/^\d{1,18}$/.test(c[1])) throw new BadRequest('Invalid page cursor.', 'admin/bad-cursor');
  const res = await q.execute(select(sql`${c ? sql`id < ${c[1]}::bigint` : sql`true`} and ${where(o)}`, o.limit + 1));
  return pageOf(res.rows as Row[], o.limit, toEntry);
}

export const AUDIT_CSV_COLUMNS = ['id', 'at', 'actor_kind', 'actor', 'action', 'target_type', 'target_id', 'before', 'after'];

/** One CSV field (RFC 4180 quoting); text a spreadsheet would run as a formula gets a leading apostrophe. */
export function csvField(v: string): string {
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function csvLine(e: AuditEntry): string {
  const actor = e.actor.kind === 'cli' ? `cli:${e.actor.osUser ?? ''}` : (e.actor.email ?? '');
  const json = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));
  return [e.id, e.at, e.actor.kind, actor, e.action, e.targetType, e.targetId, json(e.before), json(e.after)].map(csvField).join(',') + '\r\n';
}

const EXPORT_BATCH = 1000;

/** Every matching entry as CSV, newest first, read in keyset batches so a long log never sits in memory at once. */
export function auditCsv(q: Queryable, o: AuditExportQuery): Readable {
  async function* lines() {
    yield AUDIT_CSV_COLUMNS.join(',') + '\r\n';
    let before: string | null = null;
    for (;;) {
      const res = await q.execute(select(sql`${before ? sql`id < ${before}::bigint` : sql`true`} and ${where(o)}`, EXPORT_BATCH));
      const rows = res.rows as Row[];
      if (rows.length) yield rows.map((r) => csvLine(toEntry(r))).join('');
      if (rows.length < EXPORT_BATCH) return;
      before = String(rows.at(-1)!.id);
    }
  }
  return Readable.from(lines());
}
