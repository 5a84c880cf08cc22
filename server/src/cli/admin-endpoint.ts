import { createServer, type IncomingMessage } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from '../db/client';
import type { Mailer } from '../modules/mail/service';
import { ADMIN_SECRET_FILE } from '../lib/datadir-lock';
import { CliError, runAdmin } from './commands';
import { cleanOsUser } from './os-user';

const MAX_BODY = 16 * 1024;

export interface AdminEndpoint {
  port: number;
  close(): Promise<void>;
}

/**
 * The running server's door for `npm run admin` (embedded database only: PGlite cannot be opened by a second
 * process). A plain HTTP listener on 127.0.0.1 only, apart from the public app, that runs the CLI's own commands on
 * the server's database. Each request carries the secret from `DATA_DIR/admin.secret` (0600, new at every start), so
 * only the server's user (who can read that file) gets in. The lock file in DATA_DIR names the port.
 */
export async function startAdminEndpoint(opts: {
  dataDir: string;
  database: Database;
  log: { info(o: object, m: string): void };
  /** The server's mailer: a mail resent through the CLI goes out at once. */
  mailer?: Pick<Mailer, 'sends' | 'flush'>;
}): Promise<AdminEndpoint> {
  const mailer = opts.mailer;
  const mail = { sends: mailer?.sends ?? false, deliver: mailer ? () => void mailer.flush().catch(() => undefined) : undefined };
  const secret = randomBytes(32).toString('base64url');
  const secretFile = path.join(opts.dataDir, ADMIN_SECRET_FILE);
  const tmp = `${secretFile}.tmp-${process.pid}`;
  writeFileSync(tmp, `${secret}\n`, { mode: 0o600 });
  renameSync(tmp, secretFile);
  const expected = Buffer.from(`Bearer ${secret}`);

  const server = createServer(async (req, res) => {
    const reply = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const presented = Buffer.from(String(req.headers.authorization ?? ''));
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return reply(401, { error: 'bad admin secret' });
    if (req.method !== 'POST' || req.url !== '/admin/run') return reply(404, { error: 'not found' });
    let args: string[];
    let osUser: string;
    try {
      const body = JSON.parse(await readBody(req)) as { args?: unknown; osUser?: unknown };
      if (!Array.isArray(body.args) || !body.args.every((a) => typeof a === 'string')) throw new Error('args');
      args = body.args;
      // The CLI names the OS user who ran it (the audit log's actor); the secret already proved it may run commands.
      osUser = cleanOsUser(body.osUser);
    } catch {
      return reply(400, { error: 'expected {"args": string[], "osUser": string}' });
    }
    try {
      const lines = await runAdmin(args, opts.database, { actor: { kind: 'cli', osUser }, mail });
      opts.log.info({ command: args[0], osUser }, 'admin command run through the admin endpoint');
      return reply(200, { ok: true, lines });
    } catch (err) {
      const message = err instanceof CliError ? err.message : `admin: ${(err as Error).message}`;
      return reply(200, { ok: false, error: message });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        try {
          unlinkSync(secretFile);
        } catch {
          /* gone */
        }
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
