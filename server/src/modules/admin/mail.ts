import { sql, type SQL } from 'drizzle-orm';
import type { AdminMail, AdminMailPage, MailQuery, MailState } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { Conflict, NotFound } from '../../errors';
import { MAX_ATTEMPTS, requeueMail } from '../mail/service';
import { recordAudit, type Actor } from './audit';
import { beforeTimeId, decodeCursor, iso, isoOrNull, likeOf, pageOf, UUID_RE } from './cursor';

/**
 * The console's view of `mail_outbox` (issue 23): every outgoing message with its recipient, kind, state (queued,
 * sent, failed with the reason, or kept in the outbox), times, resends and the links in its text.
 */

type Row = {
  id: string; k: string; to_addr: string; subject: string; kind: string; body_text: string; created_at: unknown; sent_at: unknown;
  attempts: number | string; last_error: string | null; next_attempt_at: unknown; failed_at: unknown; resent_at: unknown; resends: number | string;
};

/** The state as SQL, one definition for the list's filter and its rows. */
const STATE_SQL = sql<MailState>`case
  when failed_at is not null or (sent_at is null and attempts >= ${MAX_ATTEMPTS}) then 'failed'
  when sent_at is null then 'queued'
  when attempts = 0 then 'outbox'
  else 'sent' end`;

const LINK = /\bhttps?:\/\/[^\s<>"')\]]+/g;
/** Distinct links of a text, in order, at most 10. */
export function linksOf(text: string): string[] {
  return [...new Set(text.match(LINK) ?? [])].slice(0, 10);
}

const toMail = (r: Row & { state: MailState }): AdminMail => ({
  id: r.id,
  to: r.to_addr,
  subject: r.subject,
  kind: r.kind,
  state: r.state,
  attempts: Number(r.attempts),
  lastError: r.last_error,
  nextAttemptAt: r.state === 'queued' ? isoOrNull(r.next_attempt_at) : null,
  createdAt: iso(r.created_at),
  sentAt: isoOrNull(r.sent_at),
  failedAt: isoOrNull(r.failed_at),
  resentAt: isoOrNull(r.resent_at),
  resends: Number(r.resends),
  links: linksOf(r.body_text),
});

const select = (where: SQL, tail: SQL = sql``) => sql`
  select * from (
    select id, created_at::text as k, to_addr, subject, kind, body_text, created_at, sent_at, attempts, last_error, next_attempt_at,
      failed_at, resent_at, resends, ${STATE_SQL} as state
    from mail_outbox) m
  where ${where} ${tail}`;

/** Newest first; `q`: a mail's id, part of the recipient's address, or its kind; `state` one of MailState. */
export async function listMail(q: Queryable, o: MailQuery): Promise<AdminMailPage> {
  const c = decodeCursor(o.after);
  const state = o.state === 'all' ? sql`true` : sql`m.state = ${o.state}`;
  let search = sql`true`;
  if (o.q && UUID_RE.test(o.q)) search = sql`m.id = ${o.q}::uuid`;
  else if (o.q) search = sql`(m.to_addr ilike ${likeOf(o.q)} or m.kind = ${o.q})`;
  const res = await q.execute(select(sql`${state} and ${search} and ${beforeTimeId(sql`m.created_at`, sql`m.id`, c)}`, sql`order by m.created_at desc, m.id desc limit ${o.limit + 1}`));
  return pageOf(res.rows as (Row & { state: MailState })[], o.limit, toMail);
}

export async function adminMailById(q: Queryable, id: string): Promise<AdminMail | null> {
  const res = await q.execute(select(sql`m.id = ${id}::uuid`));
  const r = res.rows[0] as (Row & { state: MailState }) | undefined;
  return r ? toMail(r) : null;
}

export interface ResendDeps {
  /** Whether an SMTP relay is configured (SMTP_URL): without one the outbox row is the delivery. */
  sends: boolean;
  /** Sends what is queued now (the server's mailer); without it the server's mail job does within 10 s. */
  deliver?(): void;
}

/**
 * Queues a message again (console and CLI alike) and writes the audit row with what it was before, in one
 * transaction. Refused without an SMTP relay, for a message waiting for its first try, and while it is being sent.
 */
export async function resendMail(db: Db, deps: ResendDeps, actor: Actor, id: string, now: Date): Promise<AdminMail> {
  if (!deps.sends) throw new Conflict('No SMTP relay is configured (SMTP_URL): the outbox itself is the delivery, so there is nothing to resend through.', 'admin/no-smtp');
  if (!UUID_RE.test(id)) throw new NotFound('No such mail.');
  const after = await db.transaction(async (tx) => {
    const before = await adminMailById(tx, id);
    if (!before) throw new NotFound('No such mail.');
    if (before.state === 'queued' && before.attempts === 0) throw new Conflict('This mail is waiting for its first try; it goes out within seconds.', 'admin/mail-queued');
    if (!(await requeueMail(tx, id, now))) throw new Conflict('This mail is being sent right now; look again in a minute.', 'admin/mail-busy');
    const pick = (m: AdminMail) => ({ to: m.to, kind: m.kind, state: m.state, attempts: m.attempts, lastError: m.lastError, sentAt: m.sentAt, failedAt: m.failedAt });
    const m = (await adminMailById(tx, id))!;
    await recordAudit(tx, actor, { action: 'mail.resend', targetType: 'mail', targetId: id, before: pick(before), after: { ...pick(m), resends: m.resends } }, now);
    return m;
  });
  deps.deliver?.();
  return after;
}
