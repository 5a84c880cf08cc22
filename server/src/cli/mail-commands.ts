/**
 * `npm run admin -- mail …`: the console's Mail page on the command line (issue 23).
 *   mail [list] [--state queued|sent|failed|outbox] [--limit N] [<address, kind or id>]
 *   mail resend <mail-id>
 */
import { ADMIN_PAGE_MAX, MailStateFilter, type AdminMail } from '@hyperdesk/contract';
import type { Db } from '../db/client';
import type { CliActor } from '../modules/admin/audit';
import { listMail, resendMail, type ResendDeps } from '../modules/admin/mail';
import { CliError } from './errors';

export type MailCommand =
  | { cmd: 'mail-list'; state: MailStateFilter; limit: number; q?: string }
  | { cmd: 'mail-resend'; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The arguments after `mail`; null when they are not a mail command. */
export function parseMailCommand(rest: string[]): MailCommand | null {
  if (rest[0] === 'resend') return rest.length === 2 && UUID.test(rest[1]!) ? { cmd: 'mail-resend', id: rest[1]!.toLowerCase() } : null;
  const args = rest[0] === 'list' ? rest.slice(1) : rest;
  let state: MailStateFilter = 'all';
  let limit = 25;
  let q: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--state') {
      const parsed = MailStateFilter.safeParse(args[++i]);
      if (!parsed.success) throw new CliError(`--state takes one of: ${MailStateFilter.options.join(', ')}.`);
      state = parsed.data;
    } else if (a === '--limit') {
      limit = Number(args[++i]);
      if (!Number.isInteger(limit) || limit < 1 || limit > ADMIN_PAGE_MAX) throw new CliError(`--limit takes a number from 1 to ${ADMIN_PAGE_MAX}.`);
    } else if (!a.startsWith('--') && q === undefined && a.length <= 200) q = a;
    else return null;
  }
  return { cmd: 'mail-list', state, limit, q };
}

/** "2030-05-01 08:00" (UTC), or "-". */
const when = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : '-');

/** One mail as the console shows it: a line of columns, then its reason, tries and links indented below. */
export function mailLines(m: AdminMail): string[] {
  const lines = [`${when(m.createdAt)}  ${m.state.padEnd(7)}  ${m.kind.padEnd(19)}  ${m.to.padEnd(30)}  ${when(m.sentAt).padEnd(16)}  ${m.id}`];
  const tries = [
    m.attempts ? `${m.attempts} ${m.attempts === 1 ? 'try' : 'tries'}` : '',
    m.nextAttemptAt ? `next try ${when(m.nextAttemptAt)}` : '',
    m.resends ? `resent ${m.resends}x, last ${when(m.resentAt)}` : '',
  ].filter(Boolean);
  if (m.lastError) lines.push(`    ${m.state === 'failed' ? 'failed' : 'last try failed'}: ${m.lastError}`);
  if (tries.length) lines.push(`    ${tries.join(', ')}`);
  for (const link of m.links) lines.push(`    link: ${link}`);
  return lines;
}

export async function runMail(c: MailCommand, db: Db, o: { actor: CliActor; now: Date; mail: ResendDeps }): Promise<string[]> {
  if (c.cmd === 'mail-resend') {
    const m = await resendMail(db, o.mail, o.actor, c.id, o.now).catch((err: unknown) => {
      // The console's refusals (no relay, not found, waiting, being sent) are the CLI's answers too.
      if (err instanceof Error && 'statusCode' in err) throw new CliError(`Nothing changed: ${err.message}`);
      throw err;
    });
    const soon = o.mail.deliver ? 'it is being sent now' : "a running server's mail job sends it within 10 seconds";
    return [`Queued ${m.kind} mail ${m.id} to ${m.to} again (resend ${m.resends}); ${soon}. The audit log has the resend.`];
  }
  const page = await listMail(db, { state: c.state, limit: c.limit, q: c.q });
  if (!page.items.length) return ['No mail matches.'];
  return [
    `${'CREATED'.padEnd(16)}  ${'STATE'.padEnd(7)}  ${'KIND'.padEnd(19)}  ${'TO'.padEnd(30)}  ${'SENT'.padEnd(16)}  ID`,
    ...page.items.flatMap(mailLines),
    `${page.items.length} mail${page.items.length === 1 ? '' : 's'}, newest first${page.next ? ` (more: raise --limit, up to ${ADMIN_PAGE_MAX}, or narrow with --state or a search)` : ''}`,
  ];
}
