import { randomUUID } from 'node:crypto';
import { CONTACT_FIELD_MAX } from '@hyperdesk/contract';
import type { Config } from '../../config';
import type { Db } from '../../db/client';
import { contactMessages } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Ctx } from '../../context';
import type { Principal } from '../identity/tokens';

/** Which popup sent the message: the FAQ page's Contact Support, or Contact Us everywhere else (spec §7). */
export type ContactSource = 'support' | 'contact';

export interface ContactInput {
  name?: string;
  email?: string;
  Query?: string;
  captcha?: string;
  source?: string;
}

export type ContactResult = { ok: true; email: string } | { ok: false; message: string };

export const CAPTCHA_REQUIRED = 'captcha verification is required';
export const CAPTCHA_FAILED = 'Captcha verification failed. Please solve the captcha again.';
export const successMessage = (email: string) => `Thanks! We'll get in touch with you on ${email} soon.`;

const EMAIL_RE = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;

export interface ContactDeps {
  db: Db;
  config: Pick<Config, 'CONTACT_TO' | 'SUPPORT_TO'>;
  clock: Clock;
  captcha: Pick<Ctx['captcha'], 'verify'>;
  mailer: Pick<Ctx['mailer'], 'enqueue' | 'flush'>;
  log: Pick<Ctx['log'], 'warn'>;
}

/** Stores contact-form messages and hands them to the mailer in the same transaction (outbox, house rule 5). */
export function createContactService(deps: ContactDeps) {
  return {
    /** `principal` is the verified caller when the form was sent signed in: its name and e-mail win over the form's. */
    async submit(input: ContactInput, principal: Principal | null): Promise<ContactResult> {
      const name = oneLine(principal?.name || input.name || '');
      const email = (principal?.email || input.email || '').trim().toLowerCase();
      const query = (input.Query ?? '').replace(/\r\n?/g, '\n').trim();

      const invalid = validate(name, email, query);
      if (invalid) return { ok: false, message: invalid };
      if (!input.captcha) return { ok: false, message: CAPTCHA_REQUIRED };
      if (!(await deps.captcha.verify(input.captcha))) return { ok: false, message: CAPTCHA_FAILED };

      const source: ContactSource = input.source === 'support' ? 'support' : 'contact';
      const recipient = source === 'support' ? deps.config.SUPPORT_TO : deps.config.CONTACT_TO;
      const at = deps.clock.now();
      const id = randomUUID();
      const mail = composeMail({ id, name, email, query, source, signedIn: Boolean(principal), at });
      await deps.db.transaction(async (tx) => {
        await tx.insert(contactMessages).values({
          id, userId: principal?.uid ?? null, name, email, query, source, recipient, createdAt: at,
        });
        await deps.mailer.enqueue(tx, { to: recipient, kind: `contact-${source}`, replyTo: email, id, ...mail });
      });
      // Delivered after commit; a person is waiting for this one, so don't wait for the mail job's next pass.
      deps.mailer.flush().catch((err: unknown) => deps.log.warn({ err }, 'contact mail delivery deferred to the mail job'));
      return { ok: true, email };
    },
  };
}

export type ContactService = ReturnType<typeof createContactService>;

function validate(name: string, email: string, query: string): string | null {
  if (!name) return 'Please enter your name.';
  if (!email) return 'Please enter your e-mail address.';
  if (!query) return 'Please enter your query.';
  if (name.length > CONTACT_FIELD_MAX.name) return `Your name is too long (at most ${CONTACT_FIELD_MAX.name} characters).`;
  if (email.length > CONTACT_FIELD_MAX.email) return `Your e-mail address is too long (at most ${CONTACT_FIELD_MAX.email} characters).`;
  if (!EMAIL_RE.test(email)) return 'Please enter a valid e-mail address.';
  if (query.length > CONTACT_FIELD_MAX.Query) return `Your query is too long (at most ${CONTACT_FIELD_MAX.Query} characters).`;
  return null;
}

/** Names go into a subject line: no line breaks or control characters, single spaces. */
function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

interface MailFacts {
  id: string;
  name: string;
  email: string;
  query: string;
  source: ContactSource;
  signedIn: boolean;
  at: Date;
}

/** A plain-text body and an HTML body in which every user-supplied value is escaped. */
export function composeMail(m: MailFacts): { subject: string; text: string; html: string } {
  const where = m.source === 'support' ? 'Contact Support (FAQs and Help page)' : 'Contact Us';
  const subject = `${m.source === 'support' ? 'Support request' : 'Contact request'} from ${m.name}`.slice(0, 200);
  const rows: [string, string][] = [
    ['Name', m.name],
    ['E-mail', m.email],
    ['Signed in', m.signedIn ? 'yes' : 'no'],
    ['Form', where],
    ['Received', m.at.toISOString()],
    ['Reference', m.id],
  ];
  const text = [
    ...rows.map(([k, v]) => `${k}: ${v}`),
    '',
    m.query,
    '',
    `Reply to this e-mail to answer ${m.email}.`,
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#131a2e">',
    `<h2 style="font-size:18px">${escapeHtml(subject)}</h2>`,
    '<table cellpadding="4" style="border-collapse:collapse">',
    ...rows.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`),
    '</table>',
    `<pre style="white-space:pre-wrap;font-family:inherit;border-left:3px solid #4f46e5;padding-left:12px">${escapeHtml(m.query)}</pre>`,
    `<p>Reply to this e-mail to answer ${escapeHtml(m.email)}.</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}
