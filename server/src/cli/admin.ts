/**
 * Operator CLI: `npm run admin -- <command>`.
 *   grant <email> instructor|admin     give a user the claim (it reaches their next id token, within 15 minutes)
 *   revoke <email> instructor|admin    take it away again
 *   list                               every user with their claims
 *   create-admin <email> <name>        create an admin account with a generated password (or make a user admin)
 *   reset-2fa <email>                  remove a user's authenticator and recovery codes, end their sessions (a lost phone)
 *   verify-ledger                      recompute every lot's remainder from the ledger rows and list mismatches
 *   adjust-hours <email|machine-id> <±minutes> <reason>   an `adjustment` ledger entry on that machine
 *   mail [list] [--state …] [--limit N] [<search>]   outgoing mail: recipient, kind, state and reason, times, links
 *   mail resend <mail-id>              queue a mail again (needs SMTP_URL; audited)
 * Same configuration as the server. With PostgreSQL (DATABASE_URL) it opens the database itself. With the embedded
 * database (PGlite in DATA_DIR, single-process) it never opens it beside a server: DATA_DIR's lock file says whether
 * a server holds it, and then the command runs inside that server (./admin-endpoint.ts); otherwise the CLI holds
 * the lock itself while it works, and a starting server waits for it.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig, type Config } from '../config';
import { openDatabase } from '../db/client';
import { migrate } from '../db/migrate';
import { ADMIN_SECRET_FILE, describeHolder, tryAcquire, type LockInfo } from '../lib/datadir-lock';
import { CliError, parseCommand, runAdmin } from './commands';
import type { CliActor } from '../modules/admin/audit';
import { invokingOsUser } from './os-user';

export { CliError, parseCommand, runAdmin, USAGE, type Command } from './commands';

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  const args = process.argv.slice(2).filter((a) => a !== '--');
  // Who ran it, for the audit log: read before becoming the data dir's owner below.
  const actor: CliActor = { kind: 'cli', osUser: invokingOsUser() };
  actAsDataDirOwner(config.dataDir);
  try {
    parseCommand(args);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  let code = 0;
  try {
    const lines = config.DATABASE_URL ? await runOnDatabase(config, args, actor) : await runEmbedded(config, args, actor);
    for (const line of lines) console.log(line);
  } catch (err) {
    console.error(err instanceof CliError ? err.message : `admin: ${(err as Error).message}`);
    code = 1;
  }
  process.exit(code);
}

/**
 * Run as root (as `npm run admin` usually is), the CLI becomes the data dir's owner (the server's unprivileged user,
 * npm start's `hyperdesk`) before it touches anything: files it writes in DATA_DIR (the embedded database, the lock)
 * stay the server's, and the CLI has no more power than the server.
 */
function actAsDataDirOwner(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  let st;
  try {
    st = statSync(dataDir);
  } catch {
    return;
  }
  if (st.uid === 0) return;
  process.setgroups?.([]);
  process.setgid?.(st.gid);
  process.setuid?.(st.uid);
}

async function runOnDatabase(config: Config, args: string[], actor: CliActor): Promise<string[]> {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir });
  try {
    await migrate(database);
    // Mail resent here goes out through a running server's mail job (same SMTP_URL).
    return await runAdmin(args, database, { actor, mail: { sends: !!config.SMTP_URL } });
  } finally {
    await database.close();
  }
}

/** How long the CLI waits for another admin command, or for a starting server's admin endpoint. */
const WAIT_MS = 30_000;

/** Embedded database: through the running server when DATA_DIR's lock names one, else itself under that lock. */
async function runEmbedded(config: Config, args: string[], actor: CliActor): Promise<string[]> {
  const deadline = Date.now() + WAIT_MS;
  let told = false;
  for (;;) {
    const r = tryAcquire(config.dataDir, 'cli');
    if (r.ok) {
      try {
        return await runOnDatabase(config, args, actor);
      } finally {
        r.lock.release();
      }
    }
    const h = r.holder;
    if (h.role === 'server' && h.adminPort) {
      const answer = await throughServer(config.dataDir, h, args, actor);
      if (answer) return answer;
    }
    if (Date.now() >= deadline) {
      throw new CliError(`${config.dataDir} is held by ${describeHolder(h)}, which did not answer or let go within ${WAIT_MS / 1000} s. Nothing was changed.`);
    }
    if (!told) {
      told = true;
      console.error(h.role === 'server' ? `Waiting for ${describeHolder(h)} to finish starting...` : `Waiting for ${describeHolder(h)} to finish...`);
    }
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** Runs the command in the server named by the lock; null when it cannot be reached (it is starting or just died). */
async function throughServer(dataDir: string, h: LockInfo, args: string[], actor: CliActor): Promise<string[] | null> {
  const secretFile = path.join(dataDir, ADMIN_SECRET_FILE);
  let secret: string;
  try {
    secret = readFileSync(secretFile, 'utf8').trim();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EACCES') throw new CliError(`Cannot read ${secretFile}: run this as the user the server runs as. Nothing was changed.`);
    return null;
  }
  let res: Response;
  try {
    res = await fetch(`http://127.0.0.1:${h.adminPort}/admin/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ args, osUser: actor.osUser }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    // Not listening (yet, or any more): nothing ran. Anything else may have run: never repeat it blindly.
    if ((err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') return null;
    throw new CliError(`Lost the connection to ${describeHolder(h)} during the command (${(err as Error).message}); check whether it applied before running it again.`);
  }
  if (res.status === 401) return null; // a secret from a previous start; the current one is being written
  const body = (await res.json()) as { ok: boolean; lines?: string[]; error?: string };
  if (!res.ok) throw new CliError(`The server's admin endpoint answered ${res.status}: ${body.error ?? ''}. Nothing was changed.`);
  console.error(`(run by ${describeHolder(h)}, which holds ${dataDir})`);
  if (!body.ok) throw new CliError(body.error ?? 'The command failed.');
  return body.lines ?? [];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
