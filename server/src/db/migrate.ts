import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from './client';
import { MIGRATIONS_DIR } from '../lib/paths';

const LOCK_KEY = 727_001; // advisory lock id: one migrator at a time across servers

/**
 * Applies server/migrations/*.sql in name order, each once and in its own transaction, on one pinned connection
 * holding an advisory lock. Files are numbered per domain (0100 identity, 0200 catalog, …) so domains add
 * migrations independently.
 */
export async function migrate(database: Database): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort();
  const applied: string[] = [];
  const conn = await database.pinned();
  try {
    await conn.exec(`select pg_advisory_lock(${LOCK_KEY})`);
    await conn.exec(
      'create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())',
    );
    const done = new Set(
      ((await conn.exec('select name from schema_migrations')) as { name: string }[]).map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const body = readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
      const name = file.replace(/'/g, "''");
      try {
        await conn.exec(`begin;\n${body}\n;\ninsert into schema_migrations(name) values ('${name}');\ncommit;`);
      } catch (err) {
        await conn.exec('rollback').catch(() => {});
        throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(file);
    }
  } finally {
    await conn.exec(`select pg_advisory_unlock(${LOCK_KEY})`).catch(() => {});
    conn.release();
  }
  return applied;
}
