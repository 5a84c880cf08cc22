import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { sql } from 'drizzle-orm';
import { runAdmin, CliError } from '../src/cli/admin';
import { manualClock } from '../src/lib/clock';
import { totpCode } from '../src/modules/identity/totp';
import { freshDatabase, startTestServer, type TestServer } from './harness';
import { bundleCommand } from '../../e2e/harness';
import { createUser, signUp, uniqueEmail, withCookie } from './identity-helpers';
import { enrolTotp, loginWithCode } from './admin-helpers';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs `npm run admin -- …`'s program (its compiled bundle) as a child process against the database named by env. */
async function admin(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  const [node, argv] = await bundleCommand('admin', ['--', ...args]);
  return new Promise((resolve) => {
    execFile(node, argv, { cwd: ROOT, env: { ...base, PORT: '1', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('operator CLI as a child process', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    if (process.env.DATABASE_URL) {
      const fresh = await freshDatabase();
      await fresh.database.close(); // the CLI opens it on its own; drop() below only needs the admin URL
      env = { DATABASE_URL: fresh.url! };
      cleanup = async () => fresh.drop().catch(() => undefined);
    } else {
      const dir = mkdtempSync(path.join(tmpdir(), 'hd-cli-'));
      env = { DATA_DIR: dir };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
  });
  afterAll(async () => cleanup());

  // Each run opens the database anew; PGlite takes seconds to open, so on PGlite the run covers the plumbing (DATA_DIR,
  // output, exit codes) and the claim changes are covered in-process below; on PostgreSQL every command runs.
  it('creates an admin, grants and revokes claims, lists users, and fails clearly for an unknown e-mail', async () => {
    const created = await admin(['create-admin', 'Boss@Example.com', 'The', 'Boss'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^Created admin boss@example\.com\.\nPassword: \S{16}\n/);

    if (env.DATABASE_URL) {
      const granted = await admin(['grant', 'BOSS@example.com', 'instructor'], env);
      expect(granted).toMatchObject({ code: 0, stdout: "boss@example.com now has the instructor claim (it applies from the user's next token refresh).\n" });
      const list = await admin(['list'], env);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^EMAIL\s+CLAIMS\s+CREATED\s+NAME\nboss@example\.com\s+instructor,admin\s+\d{4}-\d{2}-\d{2}\s+The Boss\n1 user\n$/);
      const revoked = await admin(['revoke', 'boss@example.com', 'admin'], env);
      expect(revoked).toMatchObject({ code: 0, stdout: "boss@example.com no longer has the admin claim (it applies from the user's next token refresh).\n" });
      // reset-2fa through the real program (arguments, output, exit code); the reset itself is tested below.
      const reset = await admin(['reset-2fa', 'Boss@Example.com'], env);
      expect(reset).toMatchObject({ code: 0, stdout: 'boss@example.com has no second factor; nothing changed.\n' });
    }

    const unknown = await admin(['grant', 'ghost@example.com', 'admin'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('No user with the e-mail ghost@example.com.');

    const usage = await admin(['grant', 'boss@example.com', 'superuser'], env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('Usage: npm run admin -- <command>');
    expect(usage.stderr).toContain('  reset-2fa <email>\n');
  }, 300_000);
});

describe('operator commands against a running server', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s.close());

  it('a grant shows up in the next refreshed id token, and a revoke takes it away', async () => {
    const u = await signUp(s, { email: uniqueEmail('teacher') });
    expect(u.user.instructor).toBe(false);
    expect(await runAdmin(['grant', u.email.toUpperCase(), 'instructor'], s.database)).toEqual([
      `${u.email} now has the instructor claim (it applies from the user's next token refresh).`,
    ]);
    const refreshed = await s.call('POST', '/v1/auth/refresh', { headers: withCookie(u.cookie) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.user.instructor).toBe(true);
    expect(decodeJwt(refreshed.body.accessToken).instructor).toBe(true);

    expect(await runAdmin(['grant', u.email, 'instructor'], s.database)).toEqual([`${u.email} already has the instructor claim; nothing changed.`]);
    await runAdmin(['revoke', u.email, 'instructor'], s.database);
    expect(await runAdmin(['revoke', u.email, 'instructor'], s.database)).toEqual([`${u.email} does not have the instructor claim; nothing changed.`]);
    const cookie = /hd_session=([^;]+)/.exec(refreshed.headers.getSetCookie().join())![1]!;
    const again = await s.call('POST', '/v1/auth/refresh', { headers: withCookie(decodeURIComponent(cookie)) });
    expect(decodeJwt(again.body.accessToken).instructor).toBe(false);
  });

  it('create-admin on an existing account grants admin without touching the password', async () => {
    const u = await createUser(s);
    expect(await runAdmin(['create-admin', u.email, 'Someone'], s.database)).toEqual([
      `${u.email} already had an account; it now has the admin claim.`,
    ]);
    const login = await s.call('POST', '/v1/auth/login', { body: { email: u.email, password: u.password } });
    expect(login.body.user.admin).toBe(true);
  });

  it('lists users with their claims', async () => {
    const u = await createUser(s, { name: 'Listed Person', instructor: true });
    const lines = await runAdmin(['list'], s.database);
    expect(lines[0]).toMatch(/^EMAIL\s+CLAIMS\s+CREATED\s+NAME$/);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${u.email.replace(/[.+]/g, '\\$&')}\\s+instructor\\s+\\d{4}-\\d{2}-\\d{2}\\s+Listed Person$`)));
    expect(lines.at(-1)).toMatch(/^\d+ users?$/);
  });

  it('refuses bad usage', async () => {
    for (const args of [[], ['list', 'extra'], ['grant', 'a@b.co'], ['create-admin', 'not-an-email', 'Name'], ['frobnicate'], ['reset-2fa'], ['reset-2fa', 'not-an-email'], ['reset-2fa', 'a@b.co', 'extra']]) {
      await expect(runAdmin(args, s.database)).rejects.toBeInstanceOf(CliError);
    }
  });
});

/**
 * `npm run admin -- reset-2fa <email>` (issue 23): an operator whose phone is lost. It removes the authenticator and
 * the recovery codes, ends the user's refresh sessions, writes `user.totp.reset` to the audit log with the CLI's OS
 * user, and an admin so reset cannot open the console until they enrol again. A manual clock moves between TOTP
 * steps (a code is never accepted twice).
 */
describe('reset-2fa: a lost phone', () => {
  const STEP = 30_000;
  const clock = manualClock(new Date('2030-03-04T10:00:05Z'));
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ clock });
  }, 180_000);
  afterAll(async () => s?.close());

  const code = (secret: string) => totpCode(secret, clock.now());
  const liveSessions = async (uid: string) =>
    Number(((await s.database.db.execute(sql`select count(*)::int as n from sessions where user_id = ${uid} and revoked_at is null`)).rows[0] as { n: number }).n);
  const factorRows = async (uid: string) =>
    (await s.database.db.execute(sql`select (select count(*)::int from user_totp where user_id = ${uid}) as totp, (select count(*)::int from recovery_codes where user_id = ${uid}) as codes`)).rows[0];

  it('removes the authenticator and recovery codes, ends the sessions, is audited, and the console stays closed until the admin enrols again', async () => {
    const op = await createUser(s, { name: 'Lost Phone', admin: true });
    const auditor = await createUser(s, { name: 'Auditor', admin: true });
    // A second device signed in with a recovery code: 9 codes unused, two live sessions, the console open.
    const other = await loginWithCode(s.call, op.email, op.password, op.recoveryCodes![0]!);
    expect(await liveSessions(op.row.id)).toBe(2);
    expect((await s.call('GET', '/v1/admin/users', { token: op.token })).status).toBe(200);
    // A sign-in waiting at its code step when the reset happens.
    const pending = await s.call('POST', '/v1/auth/login', { body: { email: op.email, password: op.password } });
    expect(pending.body.mfaRequired).toBe(true);

    clock.advance(STEP);
    const resetAt = clock.now();
    const lines = await runAdmin(['reset-2fa', op.email.toUpperCase()], s.database, { now: resetAt, actor: { kind: 'cli', osUser: 'ada (sudo as root)' } });
    expect(lines).toEqual([
      `Reset two-factor sign-in of ${op.email}: removed the authenticator and 9 unused recovery codes; ended 2 sessions.`,
      'They sign in with their password alone; the console stays closed until they turn two-factor sign-in on again.',
    ]);

    // Gone from the database, every refresh session ended: neither device can refresh (and so cannot re-enrol).
    expect(await factorRows(op.row.id)).toEqual({ totp: 0, codes: 0 });
    expect(await liveSessions(op.row.id)).toBe(0);
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(op.cookie) })).status).toBe(401);
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(other.cookie) })).status).toBe(401);
    // The old authenticator's code no longer finishes the sign-in that was waiting for it.
    expect((await s.call('POST', '/v1/auth/mfa', { body: { challenge: pending.body.challenge, code: code(op.totpSecret!) } })).body).toMatchObject({ statusCode: 401, code: 'auth/mfa-failed' });
    // Id tokens signed with the factor still say mfa, but the guard reads the database: the enrol step, not data.
    expect(decodeJwt(op.token).mfa).toBe(true);
    for (const token of [op.token, other.token]) {
      expect((await s.call('GET', '/v1/admin/users', { token })).body).toMatchObject({ statusCode: 403, code: 'admin/mfa-enrol-required' });
    }

    // The password alone signs in now (no code step); that session is not enough for the console.
    const login = await s.call('POST', '/v1/auth/login', { body: { email: op.email, password: op.password } });
    expect(login.status).toBe(200);
    expect(login.body.mfaRequired).toBeUndefined();
    expect(decodeJwt(login.body.accessToken)).toMatchObject({ amr: ['pwd'], mfa: false });
    expect((await s.call('GET', '/v1/user/totp', { token: login.body.accessToken })).body).toEqual({ enabled: false, recoveryCodesLeft: 0, required: true, passwordMustChange: false });
    expect((await s.call('GET', '/v1/admin/access', { token: login.body.accessToken })).body).toMatchObject({ statusCode: 403, code: 'admin/mfa-enrol-required' });
    expect((await s.call('GET', '/v1/admin/users', { token: login.body.accessToken })).body.code).toBe('admin/mfa-enrol-required');

    // Enrolled again (a new secret, new recovery codes): the console opens.
    clock.advance(STEP);
    const again = await enrolTotp(s.call, login.body.accessToken, clock.now());
    expect(again.secret).not.toBe(op.totpSecret);
    expect(again.recoveryCodes.some((c) => op.recoveryCodes!.includes(c))).toBe(false);
    expect((await s.call('GET', '/v1/admin/users', { token: again.token })).status).toBe(200);

    // The audit row: the CLI and who ran it, when, the target, what was there before and what is after.
    const res = await s.call('GET', `/v1/admin/audit?action=user.totp.reset&target=${encodeURIComponent(op.email)}`, { token: auditor.token });
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      {
        id: expect.any(String),
        at: resetAt.toISOString(),
        actor: { kind: 'cli', uid: null, email: null, osUser: 'ada (sudo as root)' },
        action: 'user.totp.reset',
        targetType: 'user',
        targetId: op.row.id,
        before: { email: op.email, totp: true, enrolmentPending: false, recoveryCodesLeft: 9 },
        after: { email: op.email, totp: false, recoveryCodesLeft: 0, sessionsEnded: 2 },
      },
    ]);
    // The actor filter finds it by the OS user; the CSV export has the same row.
    const byActor = await s.call('GET', `/v1/admin/audit?actor=${encodeURIComponent('cli:ada')}&action=user.totp`, { token: auditor.token });
    expect(byActor.body.items.map((e: { id: string }) => e.id)).toEqual([res.body.items[0].id]);
    const csv = await (await fetch(`${s.base}/v1/admin/audit.csv?action=user.totp.reset&target=${op.row.id}`, { headers: { idtoken: auditor.token } })).text();
    const rows = csv.trim().split('\r\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain(`,cli,cli:ada (sudo as root),user.totp.reset,user,${op.row.id},`);
    expect(rows[1]).toContain('""sessionsEnded"":2');
  });

  it('an account without a second factor, or no account: nothing changes and nothing is written', async () => {
    const u = await createUser(s);
    await s.call('POST', '/v1/user/totp/setup', { token: u.token }); // scanned, never confirmed
    const count = async () => Number(((await s.database.db.execute(sql`select count(*)::int as n from admin_audit where action = 'user.totp.reset'`)).rows[0] as { n: number }).n);
    const before = await count();
    // An unfinished enrolment is removed (someone may have started it with a stolen session), and that is audited.
    expect(await runAdmin(['reset-2fa', u.email], s.database, { now: clock.now(), actor: { kind: 'cli', osUser: 'root' } })).toEqual([
      `Reset two-factor sign-in of ${u.email}: removed an unfinished enrolment and 0 unused recovery codes; ended 1 session.`,
      'They sign in with their password alone until they turn two-factor sign-in on again.',
    ]);
    expect(await factorRows(u.row.id)).toEqual({ totp: 0, codes: 0 });
    expect(await count()).toBe(before + 1);
    // Now there is nothing left: no change, no row.
    expect(await runAdmin(['reset-2fa', u.email], s.database, { now: clock.now(), actor: { kind: 'cli', osUser: 'root' } })).toEqual([`${u.email} has no second factor; nothing changed.`]);
    await expect(runAdmin(['reset-2fa', 'ghost@example.com'], s.database)).rejects.toThrow(new CliError('No user with the e-mail ghost@example.com.'));
    expect(await count()).toBe(before + 1);
  });
});
