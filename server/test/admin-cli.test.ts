import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../src/db/client';
import { migrate } from '../src/db/migrate';
import { createLedger, verifyLedger } from '../src/modules/ledger/service';
import { insertUser } from '../src/modules/identity/users';
import { LOCK_FILE, tryAcquire } from '../src/lib/datadir-lock';
import { seedMachine } from './machines-fixtures';
import { prepareLxd, removeProject } from './lxd-fixtures';
import { lxdProjectFor } from '../src/config';
import { sessionCookie, withCookie } from './identity-helpers';
import { firstAdminSignIn } from './admin-helpers';
import { bundleCommand } from '../../e2e/harness';

/**
 * The operator CLI beside a real server process on the embedded database (PGlite in DATA_DIR), started like
 * `npm start` does, on a port other than the default: the CLI finds it through DATA_DIR's lock file only.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The LXD settings host-setup.sh left for the deployment (LXD_URL, LXD_PROJECT). */
let lxdEnv: Record<string, string> = {};

function baseEnv(dataDir: string): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...lxdEnv, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL; // this file is about the embedded database, whichever database the suite runs on
  return env;
}

async function admin(dataDir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // PORT=1: if the CLI guessed the server by port, it would miss it.
  const env = { ...baseEnv(dataDir), PORT: '1' };
  const [node, argv] = await bundleCommand('admin', ['--', ...args]);
  return new Promise((resolve) => {
    execFile(node, argv, { cwd: ROOT, env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

interface Spawned {
  base: string;
  proc: ChildProcess;
  output(): string;
  ready(timeoutMs?: number): Promise<void>;
  stop(): Promise<number | null>;
}

/** The server's compiled bundle as `npm start` runs it (without the web build), on a free non-default port. */
async function spawnServer(dataDir: string): Promise<Spawned> {
  const port = await freePort();
  const env = { ...baseEnv(dataDir), PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}` };
  const [node, argv] = await bundleCommand('main');
  const proc = spawn(node, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    proc,
    output: () => out,
    async ready(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (proc.exitCode !== null) throw new Error(`server exited:\n${out}`);
        if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`server not ready:\n${out}`);
    },
    stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
      return new Promise((resolve) => {
        proc.once('exit', (code) => resolve(code));
        proc.kill('SIGTERM');
      });
    },
  };
}

/** call() in the shape of the harness's s.call (a token as the idtoken header), for ./admin-helpers. */
const asCaller = (base: string) => (method: string, url: string, o: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) =>
  call(base, method, url, { body: o.body, headers: { ...o.headers, ...(o.token ? { idtoken: o.token } : {}) } });

async function call(base: string, method: string, url: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(base + url, {
    method,
    headers: { ...(opts.body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    body: opts.body ? JSON.stringify(opts.body) : undefined,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const email = 'teacher@school.edu';
const password = 'a-long-enough-password';

describe('admin CLI beside a running server on PGlite', () => {
  let dataDir: string;
  let server: Spawned | undefined;
  let machineId: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'hd-admin-cli-'));
    // Seeded before any server runs: a signed-up user with a machine and 2 hours on it.
    const database = await openDatabase({ dataDir });
    await migrate(database);
    const user = await insertUser(database.db, { email, displayName: 'Teacher', password, verified: true, now: new Date() });
    machineId = await seedMachine(database.db, user!.id);
    await createLedger(database.db).credit(database.db, { machineId, minutes: 120, expiresAt: new Date(Date.now() + 20 * 86_400_000), key: 'seed:1' });
    await database.close();
    lxdEnv = await prepareLxd(dataDir); // the server's machine provider (lxd) needs the deployment's project and certificate
    // host-setup.sh gave DATA_DIR to `hyperdesk`; this file's server runs as root (not through run-server.sh), so the
    // data dir stays root's too, or the CLI would become `hyperdesk` and find the server's files unreadable.
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', '0:0', dataDir]);
  }, 3_600_000); // a fresh machine builds the desktop image first (host-setup.sh)
  afterAll(async () => {
    await server?.stop();
    removeProject(lxdProjectFor(dataDir));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('grant and adjust-hours run inside the server and reach the next token refresh and the balance', async () => {
    server = await spawnServer(dataDir);
    await server.ready();
    const lock = JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8'));
    expect(lock).toMatchObject({ pid: server.proc.pid, role: 'server', adminPort: expect.any(Number) });
    expect(statSync(path.join(dataDir, 'admin.secret')).mode & 0o777).toBe(0o600);

    const login = await call(server.base, 'POST', '/v1/auth/login', { body: { email, password } });
    expect(login.status).toBe(200);
    expect(login.body.user.instructor).toBe(false);

    const granted = await admin(dataDir, ['grant', email, 'instructor']);
    expect(granted, granted.stderr).toMatchObject({ code: 0, stdout: `${email} now has the instructor claim (it applies from the user's next token refresh).\n` });
    expect(granted.stderr).toContain(`run by a Hyperdesk server (pid ${server.proc.pid})`);

    const refreshed = await call(server.base, 'POST', '/v1/auth/refresh', { headers: withCookie(sessionCookie(login.headers)) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.user.instructor).toBe(true);
    expect(decodeJwt(refreshed.body.accessToken).instructor).toBe(true);

    const adjusted = await admin(dataDir, ['adjust-hours', email, '+45', 'Goodwill for the outage']);
    expect(adjusted.code, adjusted.stderr).toBe(0);
    expect(adjusted.stdout).toBe(
      `Added 45 minutes to machine ${machineId} (Unreal Engine · Germany, ${email}): 120 → 165 minutes left. Ledger entry: adjustment, reason "Goodwill for the outage".\n`,
    );
    const taken = await admin(dataDir, ['adjust-hours', machineId, '-500', 'too much']);
    expect(taken).toMatchObject({ code: 1, stderr: expect.stringContaining('Nothing changed: only 165 minutes are left; cannot take 500.') });

    const balance = await call(server.base, 'GET', '/v1/user/wallet/balance', { headers: { idtoken: refreshed.body.accessToken } });
    expect(balance.body.balance).toContainEqual(expect.objectContaining({ timeLeft: 2.75 }));

    const verified = await admin(dataDir, ['verify-ledger']);
    expect(verified).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Ledger OK/) });

    // The console's Audit page shows what the CLI did: actor `cli` and the OS user who ran it.
    const created = await admin(dataDir, ['create-admin', 'ops@school.edu', 'Ops Team']);
    expect(created.code, created.stderr).toBe(0);
    const opsPassword = /^Password: (\S+)$/m.exec(created.stdout)![1]!;
    // The first admin changes the generated password and enrols a second factor before the console opens.
    const ops = await firstAdminSignIn(asCaller(server.base), 'ops@school.edu', opsPassword);
    const audit = await call(server.base, 'GET', '/v1/admin/audit?actor=cli', { headers: { idtoken: ops.token } });
    expect(audit.status).toBe(200);
    const osUser = userInfo().username;
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(['user.create-admin', 'hours.adjust', 'user.claim.instructor.grant']);
    expect(audit.body.items[2]).toMatchObject({
      actor: { kind: 'cli', uid: null, email: null, osUser },
      targetType: 'user',
      targetId: login.body.user.uid,
      before: { email, instructor: false },
      after: { email, instructor: true },
    });
    expect(audit.body.items[1]).toMatchObject({ targetId: machineId, before: { minutesLeft: 120 }, after: { minutesLeft: 165, minutes: 45 } });

    expect(await server.stop()).toBe(0);
    expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
    expect(existsSync(path.join(dataDir, 'admin.secret'))).toBe(false);
  }, 300_000);

  it('afterwards the database opens cleanly: every table reads, the ledger verifies, the changes are there', async () => {
    const database = await openDatabase({ dataDir });
    try {
      const tables = await database.rows<{ table_name: string }>(
        sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`,
      );
      expect(tables.length).toBeGreaterThan(10);
      for (const t of tables) {
        const [row] = await database.rows<{ n: number }>(sql.raw(`select count(*)::int as n from "${t.table_name}"`));
        expect(row!.n).toBeGreaterThanOrEqual(0);
      }
      await database.exec('vacuum analyze'); // reads every page of every table
      expect(await verifyLedger(database.db)).toEqual([]);
      const [u] = await database.rows<{ instructor: boolean }>(sql`select instructor from users where email = ${email}`);
      expect(u!.instructor).toBe(true);
      const adj = await database.rows<{ minutes: number; note: string }>(sql`select minutes, note from ledger_entries where kind = 'adjustment'`);
      expect(adj).toEqual([{ minutes: 45, note: 'Goodwill for the outage' }]);
    } finally {
      await database.close();
    }
  }, 120_000);

  it('without a server the CLI opens the database itself under the lock (taking over a stale one)', async () => {
    // A lock left by a process that is gone (a killed server): its pid no longer runs.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ pid: dead, startTime: null, role: 'server', since: 'x', adminPort: 1 }));
    const listed = await admin(dataDir, ['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${email.replace(/\./g, '\\.')}\\s+instructor\\s+`, 'm'));
    expect(listed.stderr).toBe('');
    const revoked = await admin(dataDir, ['revoke', email, 'instructor']);
    expect(revoked).toMatchObject({ code: 0, stdout: `${email} no longer has the instructor claim (it applies from the user's next token refresh).\n` });
    expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
  }, 120_000);

  it('a starting server waits while an admin command holds DATA_DIR, and starts once it lets go', async () => {
    const held = tryAcquire(dataDir, 'cli');
    if (!held.ok) throw new Error('lock not free');
    try {
      server = await spawnServer(dataDir);
      const deadline = Date.now() + 60_000;
      while (!server.output().includes('waiting up to') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(server.output()).toContain(`is in use by an admin command (pid ${process.pid}); waiting up to`);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await fetch(`${server.base}/readyz`).then(() => 'up', () => 'down')).toBe('down');
      expect(server.proc.exitCode).toBeNull();
    } finally {
      held.lock.release();
    }
    await server.ready();
    // And a second server beside it is refused at once.
    const second = await spawnServer(dataDir);
    const code = second.proc.exitCode ?? (await new Promise<number | null>((resolve) => second.proc.once('exit', resolve)));
    expect(code).toBe(1);
    expect(second.output()).toContain(`Refusing to start: a Hyperdesk server (pid ${server.proc.pid}) already uses ${dataDir}`);
    expect(await server.stop()).toBe(0);
  }, 300_000);
});
