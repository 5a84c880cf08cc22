import { drizzle as drizzlePg, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import * as schema from './schema/index';
import { listen, type Listener, type ListenOptions } from './listen';

/** Both drivers expose the same Drizzle PgDatabase API; we type them as the node-postgres one. */
export type Db = NodePgDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Queryable = Db | Tx;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Runs a multi-statement SQL script (migrations). */
  exec(script: string): Promise<void>;
  /** Rows of one raw query. */
  rows<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * Rows of a hot read, as a named prepared statement on PostgreSQL, on connections of its own: parsed and planned
   * once per connection (its generic plan: `plan_cache_mode = force_generic_plan` in those sessions) instead of on
   * every call (planning a many-join read costs more than running it). Same as `rows` on PGlite. The statement
   * must read well with a generic plan (no parameter whose value changes the right plan). One name per statement
   * text: node-postgres refuses a second text under a name it has prepared.
   */
  prepared<T = Record<string, unknown>>(name: string, query: SQL): Promise<T[]>;
  /**
   * One connection held for a session-scoped job (advisory locks); PGlite has only one. `release(true)` closes it
   * instead of returning it to the pool (it failed, or its session settings must not leak to other users).
   */
  pinned(): Promise<{ exec(script: string): Promise<unknown[]>; release(destroy?: boolean): void }>;
  /** PostgreSQL only: a dedicated, self-reconnecting LISTEN connection (./listen.ts). */
  listen?(opts: Omit<ListenOptions, 'connectionString'>): Listener;
  /** PGlite only: its data dir as a tar (a `template` for another in-memory database). */
  dump?(): Promise<Blob>;
  close(): Promise<void>;
}

const dialect = new PgDialect();
/** PostgreSQL connections per process: the general pool's, and the hot reads' (`prepared`). */
const POOL_MAX = 10;
const HOT_POOL_MAX = 10;

/**
 * Opens PostgreSQL when a URL is given, else PGlite in `dataDir/pglite` (or in memory for `memory://`). `template`:
 * an in-memory PGlite starts from this dump of a data dir (PGlite's `dumpDataDir`) instead of running initdb.
 */
export async function openDatabase(opts: { databaseUrl?: string; dataDir?: string; template?: Blob }): Promise<Database> {
  if (opts.databaseUrl) {
    const databaseUrl = opts.databaseUrl;
    // TCP keepalive: a peer that vanished (host lost, half-open connection) is noticed instead of waited on.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    pool.on('error', () => {}); // idle client errors surface on the next query instead of crashing
    // Hot reads (`prepared`) have connections of their own whose sessions use each named statement's GENERIC plan:
    // planned once per connection, whatever the table statistics. With PostgreSQL's default (plan_cache_mode auto)
    // a named statement gets a custom plan, planned anew for its parameters, on every execution for as long as its
    // generic plan is estimated costlier than those, which is what a young or small deployment's tables (no
    // statistics yet: autovacuum analyzes a table only after 50 changed rows) give the balance read: planning it
    // took 0.7 ms of PostgreSQL's CPU per read, running it 0.2 (issue 23). Only these sessions get the setting: the
    // queries on `pool` are one-off (unnamed) statements, which need their parameters' values to be planned well.
    // The setting travels in the connection's startup packet, so no query runs beside the first one.
    const hot = new pg.Pool({
      connectionString: databaseUrl,
      max: HOT_POOL_MAX,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      options: '-c plan_cache_mode=force_generic_plan',
    });
    hot.on('error', () => {});
    const db = drizzlePg({ client: pool, schema });
    return {
      db,
      kind: 'postgres',
      exec: async (script) => {
        await pool.query(script);
      },
      rows: async (q) => (await db.execute(q)).rows as never,
      prepared: async (name, q) => {
        const { sql: text, params } = dialect.sqlToQuery(q);
        return (await hot.query({ name, text, values: params })).rows;
      },
      pinned: async () => {
        const client = await pool.connect();
        // A checked-out client has no pool listener: a session ended by the server (restart, lease timeout,
        // pg_terminate_backend) would be an uncaught 'error'. It surfaces as the next query's rejection instead.
        const swallow = () => {};
        client.on('error', swallow);
        return {
          exec: async (script) => {
            const res = (await client.query(script)) as unknown as pg.QueryResult | pg.QueryResult[];
            return Array.isArray(res) ? (res.at(-1)?.rows ?? []) : res.rows;
          },
          release: (destroy) => {
            client.removeListener('error', swallow);
            client.release(destroy === true ? true : undefined);
          },
        };
      },
      listen: (o) => listen({ ...o, connectionString: databaseUrl }),
      close: async () => {
        await Promise.all([pool.end(), hot.end()]);
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  let dir: string | undefined;
  if (opts.dataDir && opts.dataDir !== 'memory://') {
    dir = path.join(opts.dataDir, 'pglite');
    // Private to the server's user: desktops run on the same host as another user.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  const client = dir ? new PGlite(dir) : new PGlite({ loadDataDir: opts.template });
  await client.waitReady;
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    exec: async (script) => {
      await client.exec(script);
    },
    rows: async (q) => (await db.execute(q)).rows as never,
    prepared: async (_name, q) => (await db.execute(q)).rows as never,
    pinned: async () => ({
      exec: async (script) => {
        const res = await client.exec(script);
        return res.at(-1)?.rows ?? [];
      },
      release: () => {},
    }),
    close: () => client.close(),
    dump: () => client.dumpDataDir('none'),
  };
}

export { sql };
