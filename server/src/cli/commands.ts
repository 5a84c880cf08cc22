/**
 * The operator commands (`npm run admin -- <command>`), free of side effects on import: the CLI (./admin.ts) runs
 * them on its own database connection, the running server's admin endpoint (./admin-endpoint.ts) on its own.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Database, Db } from '../db/client';
import { machines, users } from '../db/schema/index';
import { adjust, verifyLedger } from '../modules/ledger/service';
import { CLAIMS, findUserByEmail, insertUser, isValidEmail, listUsers, normalizeEmail, setClaim, type Claim } from '../modules/identity/users';
import { recordAudit, type CliActor } from '../modules/admin/audit';
import { auditSecondFactorReset, resetSecondFactor } from '../modules/identity/two-factor';
import type { ResendDeps } from '../modules/admin/mail';
import { invokingOsUser } from './os-user';
import { CliError } from './errors';
import { parseMailCommand, runMail, type MailCommand } from './mail-commands';

export { CliError };

export const USAGE = `Usage: npm run admin -- <command>
  grant <email> instructor|admin
  revoke <email> instructor|admin
  list
  create-admin <email> <name>
  reset-2fa <email>
  verify-ledger
  adjust-hours <email|machine-id> <+minutes|-minutes> "<reason>"
  mail [list] [--state queued|sent|failed|outbox] [--limit N] [<address, kind or id>]
  mail resend <mail-id>`;

const isClaim = (s: string | undefined): s is Claim => CLAIMS.includes(s as Claim);

export type Command =
  | { cmd: 'grant' | 'revoke'; email: string; claim: Claim }
  | { cmd: 'list' }
  | { cmd: 'create-admin'; email: string; name: string }
  | { cmd: 'reset-2fa'; email: string }
  | { cmd: 'verify-ledger' }
  | { cmd: 'adjust-hours'; target: string; minutes: number; reason: string }
  | MailCommand;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An adjustment is a correction, not a sale: at most a year of minutes either way. */
const MAX_ADJUST_MINUTES = 366 * 24 * 60;

/** Checks the arguments before any database is opened. */
export function parseCommand(args: string[]): Command {
  const [cmd, ...rest] = args;
  if ((cmd === 'grant' || cmd === 'revoke') && rest.length === 2 && isClaim(rest[1])) return { cmd, email: rest[0]!, claim: rest[1] };
  if ((cmd === 'list' || cmd === 'verify-ledger') && rest.length === 0) return { cmd };
  if (cmd === 'create-admin' && rest.length >= 2) {
    const email = normalizeEmail(rest[0]!);
    const name = rest.slice(1).join(' ').trim();
    if (!isValidEmail(email)) throw new CliError(`${rest[0]} is not a valid e-mail address.`);
    if (name) return { cmd, email, name };
  }
  if (cmd === 'reset-2fa' && rest.length === 1) {
    const email = normalizeEmail(rest[0]!);
    if (!isValidEmail(email)) throw new CliError(`${rest[0]} is not a valid e-mail address.`);
    return { cmd, email };
  }
  if (cmd === 'mail') {
    const mail = parseMailCommand(rest);
    if (mail) return mail;
  }
  if (cmd === 'adjust-hours' && rest.length >= 3) {
    const [target, amount] = rest as [string, string];
    const reason = rest.slice(2).join(' ').trim();
    if (!/^[+-]?\d{1,7}$/.test(amount) || Number(amount) === 0 || Math.abs(Number(amount)) > MAX_ADJUST_MINUTES) {
      throw new CliError(`${amount} is not a number of minutes: use e.g. +90 or -30 (non-zero, at most ${MAX_ADJUST_MINUTES}).`);
    }
    if (!UUID.test(target) && !isValidEmail(normalizeEmail(target))) throw new CliError(`${target} is neither an e-mail address nor a machine id.`);
    if (reason.length > 500) throw new CliError('The reason is too long (500 characters at most).');
    if (reason) return { cmd, target: UUID.test(target) ? target.toLowerCase() : normalizeEmail(target), minutes: Number(amount), reason };
  }
  throw new CliError(USAGE);
}

export interface RunOptions {
  /** Who runs the command, for the audit log; this process's OS user when not given (the admin endpoint passes the CLI's). */
  actor?: CliActor;
  now?: Date;
  /** Whether mail can be resent (an SMTP relay is configured) and how to send it at once (inside a server). */
  mail?: ResendDeps;
}

/**
 * Runs one command and returns the lines to print; throws CliError for a usage or lookup problem. Every command that
 * changes something writes its audit row (actor `cli` and the OS user) in the same transaction as the change, so
 * the console's Audit page shows CLI actions beside the console's own.
 */
export async function runAdmin(args: string[], database: Database, opts: RunOptions = {}): Promise<string[]> {
  const c = parseCommand(args);
  const db = database.db;
  const now = opts.now ?? new Date();
  const actor: CliActor = opts.actor ?? { kind: 'cli', osUser: invokingOsUser() };
  switch (c.cmd) {
    case 'grant':
    case 'revoke': {
      const value = c.cmd === 'grant';
      const outcome = await db.transaction(async (tx) => {
        const before = await findUserByEmail(tx, c.email);
        if (before && before[c.claim] === value) return { unchanged: before.email };
        const row = await setClaim(tx, c.email, c.claim, value);
        if (!row) throw new CliError(`No user with the e-mail ${normalizeEmail(c.email)}.`);
        await recordAudit(tx, actor, { action: `user.claim.${c.claim}.${c.cmd}`, targetType: 'user', targetId: row.id, before: { email: row.email, [c.claim]: !value }, after: { email: row.email, [c.claim]: value } }, now);
        return { changed: row.email };
      });
      if ('unchanged' in outcome) return [`${outcome.unchanged} ${value ? 'already has' : 'does not have'} the ${c.claim} claim; nothing changed.`];
      const verb = value ? 'now has' : 'no longer has';
      return [`${outcome.changed} ${verb} the ${c.claim} claim (it applies from the user's next token refresh).`];
    }
    case 'list': {
      const rows = await listUsers(db);
      if (!rows.length) return ['No users yet.'];
      const width = Math.max(5, ...rows.map((r) => r.email.length));
      return [
        `${'EMAIL'.padEnd(width)}  CLAIMS             CREATED     NAME`,
        ...rows.map((r) => {
          const claims = CLAIMS.filter((k) => r[k]).join(',') || '-';
          return `${r.email.padEnd(width)}  ${claims.padEnd(17)}  ${r.createdAt.toISOString().slice(0, 10)}  ${r.displayName}`;
        }),
        `${rows.length} user${rows.length === 1 ? '' : 's'}`,
      ];
    }
    case 'verify-ledger': {
      const bad = await verifyLedger(db);
      if (!bad.length) return ['Ledger OK: every lot remainder equals its credit plus its debits, expiries and adjustments.'];
      throw new CliError(
        [`${bad.length} lot${bad.length === 1 ? '' : 's'} disagree with the ledger:`, ...bad.map((b) => `lot ${b.lotId} machine ${b.machineId}: remaining ${b.remaining ?? 'missing'}, ledger says ${b.expected}`)].join('\n'),
      );
    }
    case 'create-admin': {
      const password = randomBytes(12).toString('base64url');
      return db.transaction(async (tx) => {
        const created = await insertUser(tx, { email: c.email, displayName: c.name, password, admin: true, verified: true, now });
        if (created) {
          // The console opens once this generated password is changed and a second factor enrolled (issue 23.2).
          await tx.update(users).set({ passwordMustChange: true }).where(eq(users.id, created.id));
          await recordAudit(tx, actor, { action: 'user.create-admin', targetType: 'user', targetId: created.id, after: { email: created.email, displayName: created.displayName, admin: true } }, now);
          return [`Created admin ${created.email}.`, `Password: ${password}`, 'Log in with it: the console asks for a new password and a second factor (an authenticator app) before it opens.'];
        }
        const before = await findUserByEmail(tx, c.email);
        const row = (await setClaim(tx, c.email, 'admin', true))!;
        if (!before?.admin) {
          await recordAudit(tx, actor, { action: 'user.claim.admin.grant', targetType: 'user', targetId: row.id, before: { email: row.email, admin: false }, after: { email: row.email, admin: true } }, now);
        }
        return [`${row.email} already had an account; it now has the admin claim.`];
      });
    }
    case 'reset-2fa':
      return db.transaction(async (tx) => {
        const user = await findUserByEmail(tx, c.email);
        if (!user) throw new CliError(`No user with the e-mail ${c.email}.`);
        const removed = await resetSecondFactor(tx, user.id, now);
        if (!removed) return [`${user.email} has no second factor; nothing changed.`];
        await auditSecondFactorReset(tx, actor, user, removed, now);
        const what = [
          removed.totp ? 'the authenticator' : removed.enrolmentPending ? 'an unfinished enrolment' : null,
          `${removed.recoveryCodesLeft} unused recovery code${removed.recoveryCodesLeft === 1 ? '' : 's'}`,
        ].filter(Boolean);
        return [
          `Reset two-factor sign-in of ${user.email}: removed ${what.join(' and ')}; ended ${removed.sessionsEnded} session${removed.sessionsEnded === 1 ? '' : 's'}.`,
          user.admin
            ? 'They sign in with their password alone; the console stays closed until they turn two-factor sign-in on again.'
            : 'They sign in with their password alone until they turn two-factor sign-in on again.',
        ];
      });
    case 'adjust-hours':
      return adjustHours(db, c, actor, now);
    case 'mail-list':
    case 'mail-resend':
      return runMail(c, db, { actor, now, mail: opts.mail ?? { sends: false } });
  }
}

/** adjust-hours: finds the machine (by id, or the user's only machine of their own), writes the adjustment, reports. */
async function adjustHours(db: Db, c: Extract<Command, { cmd: 'adjust-hours' }>, actor: CliActor, now: Date): Promise<string[]> {
  let machine: { id: string; name: string } | undefined;
  if (UUID.test(c.target)) {
    [machine] = await db.select({ id: machines.id, name: machines.name }).from(machines).where(eq(machines.id, c.target));
    if (!machine) throw new CliError(`No machine ${c.target}.`);
  } else {
    const user = await findUserByEmail(db, c.target);
    if (!user) throw new CliError(`No user with the e-mail ${c.target}.`);
    const own = await db
      .select({ id: machines.id, name: machines.name })
      .from(machines)
      .where(and(eq(machines.ownerUserId, user.id), isNull(machines.courseId)))
      .orderBy(asc(machines.createdAt));
    if (own.length === 0) throw new CliError(`${user.email} has no machine of their own; pass a course machine's id instead.`);
    if (own.length > 1) {
      throw new CliError([`${user.email} has ${own.length} machines; pass the id of one:`, ...own.map((m) => `  ${m.id}  ${m.name}`)].join('\n'));
    }
    machine = own[0]!;
  }
  const target = machine;
  const result = await db
    .transaction(async (tx) => {
      const r = await adjust(tx, { machineId: target.id, minutes: c.minutes, reason: c.reason, key: `admin-cli:${randomUUID()}`, at: now });
      await recordAudit(tx, actor, { action: 'hours.adjust', targetType: 'machine', targetId: target.id, before: { minutesLeft: r.remainingMinutes - c.minutes }, after: { minutesLeft: r.remainingMinutes, minutes: c.minutes, reason: c.reason } }, now);
      return r;
    })
    .catch((err: unknown) => {
      if (err instanceof RangeError) throw new CliError(`Nothing changed: ${err.message}.`);
      throw err;
    });
  const [owner] = await db
    .select({ email: users.email })
    .from(machines)
    .innerJoin(users, eq(users.id, machines.ownerUserId))
    .where(eq(machines.id, target.id));
  const verb = c.minutes > 0 ? `Added ${c.minutes}` : `Took ${-c.minutes}`;
  const whose = owner ? `, ${owner.email}` : '';
  return [
    `${verb} minute${Math.abs(c.minutes) === 1 ? '' : 's'} ${c.minutes > 0 ? 'to' : 'from'} machine ${target.id} (${target.name}${whose}): ` +
      `${result.remainingMinutes - c.minutes} → ${result.remainingMinutes} minutes left. Ledger entry: adjustment, reason "${c.reason}".`,
  ];
}
