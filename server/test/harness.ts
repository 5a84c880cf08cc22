import pg from 'pg';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { loadConfig, type Config } from '../src/config';
import { openDatabase, type Database } from '../src/db/client';
import { migrate } from '../src/db/migrate';
import { MIGRATIONS_DIR } from '../src/lib/paths';
import { buildApp } from '../src/app';
import type { AppDeps } from '../src/services';
import type { Clock } from '../src/lib/clock';
import { fakeProvider } from './machines-fixtures';

/**
 * A fresh database for one test file: PGlite in memory by default, or a new throw-away database on the
 * PostgreSQL server named by DATABASE_URL (so test files run in parallel without seeing each other's rows).
 */
export async function freshDatabase(): Promise<{ database: Database; url?: string; drop(): Promise<void> }> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const database = await openDatabase({ dataDir: 'memory://', template: await migratedTemplate() });
    await migrate(database); // nothing left to apply when the template is current
    return { database, drop: async () => database.close() };
  }
  const name = `hd_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString() });
  await migrate(database);
  return {
    database,
    url: url.toString(),
    drop: async () => {
      await database.close();
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

let template: Promise<Blob> | undefined;

/**
 * A migrated PGlite data dir as a tar, made once per set of migrations and kept in server/node_modules/.cache (ours,
 * not a shared temp dir another user could plant a file in): PGlite's initdb takes 2–4 s on a busy 2-core host,
 * loading this dump under 1 s, and each test file opens its own database. Read once per process (the API files
 * share theirs); a dump of older migrations is removed when a new one is made.
 */
function migratedTemplate(): Promise<Blob> {
  template ??= readOrMakeTemplate();
  return template;
}

async function readOrMakeTemplate(): Promise<Blob> {
  const hash = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR).sort()) hash.update(f).update(readFileSync(path.join(MIGRATIONS_DIR, f)));
  // The installed PGlite's package.json (a dump is only read back by the version that made it).
  const pglite = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '..', 'package.json');
  hash.update(readFileSync(pglite));
  const cache = path.join(MIGRATIONS_DIR, '..', 'node_modules', '.cache');
  const name = `pglite-migrated-${hash.digest('hex').slice(0, 16)}.tar`;
  const file = path.join(cache, name);
  if (!existsSync(file)) {
    mkdirSync(cache, { recursive: true });
    const database = await openDatabase({ dataDir: 'memory://' });
    await migrate(database);
    const tar = Buffer.from(await (await database.dump!()).arrayBuffer());
    await database.close();
    const part = `${file}.${process.pid}`;
    writeFileSync(part, tar);
    renameSync(part, file); // whole or absent: files made at once by two workers replace each other
    for (const old of readdirSync(cache)) if (/^pglite-migrated-[0-9a-f]{16}\.tar$/.test(old) && old !== name) rmSync(path.join(cache, old), { force: true });
  }
  return new Blob([readFileSync(file)]);
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ PORT: '0', DATA_DIR: 'memory://', LOG_LEVEL: 'silent', ...env } as NodeJS.ProcessEnv);
}

export interface TestServer {
  base: string;
  app: Awaited<ReturnType<typeof buildApp>>;
  database: Database;
  config: Config;
  /** JSON request helper: returns status, parsed body and headers. */
  call(method: string, path: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string>; raw?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * Builds the app with the same buildApp as production and serves it over real HTTP on a free port. Its machines
 * run on an in-memory fake provider (machines-fixtures.ts) unless `overrides.machineProvider` names another: tests
 * that need real desktops pass an lxd deployment's provider (lxd-fixtures.ts).
 */
export async function startTestServer(
  opts: { clock?: Clock; env?: Record<string, string>; overrides?: AppDeps['overrides']; logger?: AppDeps['logger'] } = {},
): Promise<TestServer> {
  const { database, drop } = await freshDatabase();
  const config = testConfig(opts.env);
  const app = await buildApp({ config, database, clock: opts.clock, logger: opts.logger ?? false, overrides: { machineProvider: fakeProvider(1), ...opts.overrides } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return {
    base,
    app,
    database,
    config,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.idtoken = o.token;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      } else if (o.raw !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
      const res = await fetch(base + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await app.close();
      await drop();
    },
  };
}
