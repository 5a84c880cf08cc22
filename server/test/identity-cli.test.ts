import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { runAdmin, CliError } from '../src/cli/admin';
import { freshDatabase, startTestServer, type TestServer } from './harness';
import { createUser, signUp, uniqueEmail, withCookie } from './identity-helpers';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'server/src/cli/admin.ts');

/** Runs `npm run admin -- …`'s program as a child process against the database named by env. */
function admin(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', CLI, '--', ...args], { cwd: ROOT, env: { ...base, PORT: '1', ...env } }, (err, stdout, stderr) =>
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
    }

    const unknown = await admin(['grant', 'ghost@example.com', 'admin'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('No user with the e-mail ghost@example.com.');

    const usage = await admin(['grant', 'boss@example.com', 'superuser'], env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('Usage: npm run admin -- <command>');
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
    for (const args of [[], ['list', 'extra'], ['grant', 'a@b.co'], ['create-admin', 'not-an-email', 'Name'], ['frobnicate']]) {
      await expect(runAdmin(args, s.database)).rejects.toBeInstanceOf(CliError);
    }
  });
});
