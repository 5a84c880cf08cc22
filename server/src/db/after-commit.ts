import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Db, Queryable, Tx } from './client';

/**
 * Work that must see a transaction's changes (telling other servers and dashboards about them) runs after its commit,
 * never on a timer that a busy database can outrun: a transaction made with `transaction()` keeps what `afterCommit`
 * asks of it and runs it once committed; a rolled-back one drops it.
 */
const waiting = new WeakMap<Tx, (() => void)[]>();

/** `db.transaction(fn)`, then what fn asked to run after its commit, in order. */
export async function transaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const after: (() => void)[] = [];
  const result = await db.transaction(async (tx) => {
    waiting.set(tx, after);
    return fn(tx);
  });
  for (const run of after) run();
  return result;
}

/**
 * Runs `fn` once `q`'s changes are committed: at once outside a transaction (each statement commits by itself), after
 * the commit inside one made by `transaction()`. Any other transaction is a mistake this refuses loudly: nothing would
 * run `fn` after its commit.
 */
export function afterCommit(q: Queryable, fn: () => void): void {
  if (!(q instanceof PgTransaction)) return fn();
  const after = waiting.get(q as Tx);
  if (!after) throw new Error('afterCommit needs a transaction made by transaction() (db/after-commit)');
  after.push(fn);
}
