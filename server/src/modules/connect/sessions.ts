import { and, eq, gt, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { connectSessions } from '../../db/schema/index';

/** Open desktop sessions a user may have at once, counted over every server of the deployment. */
export const MAX_SESSIONS_PER_USER = 4;
/** How often a server refreshes alive_at of its open sessions (the connect-alive job). */
export const ALIVE_INTERVAL_MS = 10_000;
/** An open row not refreshed for this long belongs to a server that died: it no longer counts and gets closed. */
export const ALIVE_STALE_MS = 35_000;

/**
 * Takes one of the user's session places and writes the session row (opened_at = when the socket came), or answers
 * false when the user already has MAX_SESSIONS_PER_USER live sessions on any server. A per-user transaction lock
 * orders concurrent attempts, wherever they run.
 */
export async function reserveSession(db: Db, s: { id: string; userId: string; machineId: string; openedAt: Date; now: Date }): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${'connect-sessions:' + s.userId}))`);
    const fresh = new Date(s.now.getTime() - ALIVE_STALE_MS);
    const [row] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(connectSessions)
      .where(and(eq(connectSessions.userId, s.userId), isNull(connectSessions.closedAt), gt(connectSessions.aliveAt, fresh)));
    if ((row?.n ?? 0) >= MAX_SESSIONS_PER_USER) return false;
    await tx.insert(connectSessions).values({ id: s.id, machineId: s.machineId, userId: s.userId, openedAt: s.openedAt, aliveAt: s.now });
    return true;
  });
}

/** A reserved place given back before the session opened (refused, no desktop, client gone): no trace is kept. */
export async function forgetSession(db: Db, id: string): Promise<void> {
  await db.delete(connectSessions).where(and(eq(connectSessions.id, id), isNull(connectSessions.closedAt)));
}

/** This server's open sessions are alive (ALIVE_INTERVAL_MS). */
export async function touchSessions(db: Db, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.update(connectSessions).set({ aliveAt: now }).where(and(inArray(connectSessions.id, ids), isNull(connectSessions.closedAt)));
}

/** Closes open rows whose server stopped refreshing them (it was killed or lost), as of their last sign of life. */
export async function closeLostSessions(db: Db, now: Date): Promise<number> {
  const rows = await db
    .update(connectSessions)
    .set({ closedAt: sql`${connectSessions.aliveAt}`, closeReason: 'server-lost' })
    .where(and(isNull(connectSessions.closedAt), lte(connectSessions.aliveAt, new Date(now.getTime() - ALIVE_STALE_MS))))
    .returning({ id: connectSessions.id });
  return rows.length;
}
