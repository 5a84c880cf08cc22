/**
 * Operator CLI: `npm run admin -- <command>`.
 *   grant <email> instructor|admin     give a user the claim (it reaches their next id token, within 15 minutes)
 *   revoke <email> instructor|admin    take it away again
 *   list                               every user with their claims
 *   create-admin <email> <name>        create an admin account with a generated password (or make a user admin)
 *   verify-ledger                      recompute every lot's remainder from the ledger rows and list mismatches
 * Opens the database from the same configuration as the server (DATABASE_URL, else PGlite in DATA_DIR).
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config';
import { openDatabase, type Database } from '../db/client';
import { migrate } from '../db/migrate';
import { verifyLedger } from '../modules/ledger/service';
import { CLAIMS, insertUser, isValidEmail, listUsers, normalizeEmail, setClaim, type Claim } from '../modules/identity/users';

export const USAGE = `Usage: npm run admin -- <command>
  grant <email> instructor|admin
  revoke <email> instructor|admin
  list
  create-admin <email> <name>
  verify-ledger`;

export class CliError extends Error {}

const isClaim = (s: string | undefined): s is Claim => CLAIMS.includes(s as Claim);

export type Command =
  | { cmd: 'grant' | 'revoke'; email: string; claim: Claim }
  | { cmd: 'list' }
  | { cmd: 'create-admin'; email: string; name: string }
  | { cmd: 'verify-ledger' };

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
  throw new CliError(USAGE);
}

/** Runs one command and returns the lines to print; throws CliError for a usage or lookup problem. */
export async function runAdmin(args: string[], database: Database, now = new Date()): Promise<string[]> {
  const c = parseCommand(args);
  const db = database.db;
  switch (c.cmd) {
    case 'grant':
    case 'revoke': {
      const row = await setClaim(db, c.email, c.claim, c.cmd === 'grant');
      if (!row) throw new CliError(`No user with the e-mail ${normalizeEmail(c.email)}.`);
      const verb = c.cmd === 'grant' ? 'now has' : 'no longer has';
      return [`${row.email} ${verb} the ${c.claim} claim (it applies from the user's next token refresh).`];
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
      const created = await insertUser(db, { email: c.email, displayName: c.name, password, admin: true, verified: true, now });
      if (created) return [`Created admin ${created.email}.`, `Password: ${password}`, 'Change it after the first login.'];
      const row = await setClaim(db, c.email, 'admin', true);
      return [`${row!.email} already had an account; it now has the admin claim.`];
    }
  }
}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  const args = process.argv.slice(2).filter((a) => a !== '--');
  try {
    parseCommand(args);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  if (!config.DATABASE_URL && (await serverAnswers(config.PORT))) {
    console.error(
      `A Hyperdesk server is running on port ${config.PORT}. PGlite lets one process at a time open ${config.dataDir}:\n` +
        'stop the server, run this command, then start the server again (with DATABASE_URL there is no such limit).',
    );
    process.exit(1);
  }
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.dataDir });
  let code = 0;
  try {
    await migrate(database);
    for (const line of await runAdmin(args, database)) console.log(line);
  } catch (err) {
    console.error(err instanceof CliError ? err.message : `admin: ${(err as Error).message}`);
    code = 1;
  } finally {
    await database.close();
  }
  process.exit(code);
}

async function serverAnswers(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1500) });
    return res.ok && ((await res.json()) as { ok?: boolean }).ok === true;
  } catch {
    return false;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
