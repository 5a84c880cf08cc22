import { randomUUID } from 'node:crypto';
import { createTransport } from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from '../../db/client';
import { sql } from '../../db/client';
import { mailOutbox } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  kind: string;
  /** Where a reply goes (the visitor of a contact form); MAIL_FROM otherwise. */
  replyTo?: string;
  /** The outbox row's id (a contact message uses its own, so the console can show the delivery); random otherwise. */
  id?: string;
}

export interface Mailer {
  /** Records the mail in mail_outbox using `q` (pass your transaction so the mail exists iff your change commits).
   *  Delivery happens after commit: with SMTP_URL the mail job (ctx.jobs) sends pending rows and marks them sent;
   *  without SMTP_URL the outbox row itself is the delivery (readable by operators). */
  enqueue(q: Queryable, mail: OutgoingMail): Promise<void>;
  /** Sends pending outbox rows now (also what the job runs); answers how many were delivered. */
  flush(): Promise<number>;
  /** Resolves once no flush is running (the server awaits it before closing the database). */
  idle(): Promise<void>;
  /** True when rows wait for a transport (SMTP); false when the outbox is the delivery. */
  readonly sends: boolean;
}

/** Where pending rows go. Only SMTP exists today; the outbox transport needs none. */
export interface MailTransport {
  send(mail: { from: string; to: string; subject: string; text: string; html?: string; replyTo?: string }): Promise<void>;
}

export function smtpTransport(url: string): MailTransport {
  const transporter = createTransport({
    url,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    async send(mail) {
      await transporter.sendMail(mail);
    },
  };
}

export const MAX_ATTEMPTS = 10;
const BATCH = 20;
const CLAIM_MS = 2 * 60_000;

/**
 * A refusal that another try cannot fix: the relay answered 5xx (no such mailbox, message rejected, relaying denied).
 * nodemailer puts the SMTP reply code on the error. Connection errors and 4xx answers are worth retrying.
 */
export function isPermanent(err: unknown): boolean {
  const code = (err as { responseCode?: unknown } | null)?.responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

/**
 * An operator's resend: the row goes back to the queue as if new (its tries, error and failure cleared; when and
 * how often it was resent kept), unless a server is sending it at this moment. False when no such row is free.
 */
export async function requeueMail(q: Queryable, id: string, now: Date): Promise<boolean> {
  const res = await q.execute(sql`
    update mail_outbox set sent_at = null, failed_at = null, attempts = 0, next_attempt_at = null, last_error = null,
      claimed_until = null, resent_at = ${now}, resends = resends + 1
    where id = ${id}::uuid and (claimed_until is null or claimed_until <= ${now})
    returning id`);
  return res.rows.length === 1;
}

/** Wait before the next try after `attempts` failures: 1, 2, 4 … minutes, at most an hour. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60 * 60_000, 60_000 * 2 ** Math.max(0, attempts - 1));
}

interface Claimed {
  id: string;
  to_addr: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  reply_to: string | null;
  attempts: number;
}

export function createMailer(deps: {
  database: Database;
  clock: Clock;
  log: FastifyBaseLogger;
  from: string;
  /** null: the outbox row is the delivery. */
  transport: MailTransport | null;
}): Mailer {
  const { database, clock, log, transport } = deps;
  let queue: Promise<unknown> = Promise.resolve();

  // Claims a batch (skip locked, so concurrent servers split the work), then sends outside any transaction.
  const claim = async (now: Date): Promise<Claimed[]> =>
    database.rows<Claimed>(sql`
      update mail_outbox set claimed_until = ${new Date(now.getTime() + CLAIM_MS)}, attempts = attempts + 1
      where id in (
        select id from mail_outbox
        where sent_at is null and failed_at is null and attempts < ${MAX_ATTEMPTS}
          and (next_attempt_at is null or next_attempt_at <= ${now})
          and (claimed_until is null or claimed_until <= ${now})
        order by created_at
        limit ${BATCH}
        for update skip locked)
      returning id, to_addr, subject, body_text, body_html, reply_to, attempts`);

  const pass = async (): Promise<number> => {
    if (!transport) return 0;
    let sent = 0;
    for (;;) {
      const rows = await claim(clock.now());
      for (const row of rows) {
        try {
          await transport.send({
            from: deps.from,
            to: row.to_addr,
            subject: row.subject,
            text: row.body_text,
            html: row.body_html ?? undefined,
            replyTo: row.reply_to ?? undefined,
          });
          await database.rows(
            sql`update mail_outbox set sent_at = ${clock.now()}, last_error = null, claimed_until = null where id = ${row.id}`,
          );
          sent += 1;
        } catch (err) {
          const message = String((err as Error).message ?? err).slice(0, 500);
          const now = clock.now();
          const givenUp = isPermanent(err) || row.attempts >= MAX_ATTEMPTS;
          const next = new Date(now.getTime() + retryDelayMs(row.attempts));
          log.warn({ mailId: row.id, attempts: row.attempts, err: message, givenUp }, 'mail delivery failed');
          await database.rows(
            sql`update mail_outbox set last_error = ${message}, next_attempt_at = ${givenUp ? null : next},
              failed_at = ${givenUp ? now : null}, claimed_until = null where id = ${row.id}`,
          );
        }
      }
      if (rows.length < BATCH) return sent;
    }
  };

  return {
    sends: transport !== null,
    async enqueue(q, mail) {
      const now = clock.now();
      await q.insert(mailOutbox).values({
        id: mail.id ?? randomUUID(),
        toAddr: mail.to,
        subject: mail.subject,
        bodyText: mail.text,
        bodyHtml: mail.html ?? null,
        replyTo: mail.replyTo ?? null,
        kind: mail.kind,
        createdAt: now,
        sentAt: transport ? null : now,
      });
    },
    flush() {
      // One pass at a time per process; a flush asked for during a pass runs after it.
      const run = queue.then(pass, pass);
      queue = run.catch(() => undefined);
      return run;
    },
    async idle() {
      await queue;
    },
  };
}
