import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { freshDatabase } from './harness';
import { seedMachine, seedUser } from './machines-fixtures';
import { connectSessions } from '../src/db/schema/index';
import { ALIVE_STALE_MS, closeLostSessions, forgetSession, MAX_SESSIONS_PER_USER, reserveSession, touchSessions } from '../src/modules/connect/sessions';

/**
 * The per-user desktop session limit is counted in connect_sessions, so every server of a deployment sees the same
 * count; a server that died stops counting once its rows are no longer refreshed.
 */
describe('desktop session places', () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    fresh = await freshDatabase();
  });
  afterAll(async () => fresh?.drop());

  it(`gives a user ${MAX_SESSIONS_PER_USER} places across concurrent attempts, however they interleave`, async () => {
    const db = fresh.database.db;
    const u = await seedUser(db);
    const machineId = await seedMachine(db, u.uid);
    const now = new Date();
    const tries = await Promise.all(
      Array.from({ length: 10 }, () => reserveSession(db, { id: randomUUID(), userId: u.uid, machineId, openedAt: now, now })),
    );
    expect(tries.filter(Boolean)).toHaveLength(MAX_SESSIONS_PER_USER);
  });

  it('frees the places of a server that stopped refreshing its sessions, and closes those rows', async () => {
    const db = fresh.database.db;
    const u = await seedUser(db);
    const machineId = await seedMachine(db, u.uid);
    const t0 = new Date('2030-01-01T00:00:00Z');
    const ids = Array.from({ length: MAX_SESSIONS_PER_USER }, () => randomUUID());
    for (const id of ids) expect(await reserveSession(db, { id, userId: u.uid, machineId, openedAt: t0, now: t0 })).toBe(true);
    const later = new Date(t0.getTime() + ALIVE_STALE_MS - 5_000);
    expect(await reserveSession(db, { id: randomUUID(), userId: u.uid, machineId, openedAt: later, now: later })).toBe(false);
    // The server holding the first two is alive (it refreshes them); the other two belong to a server that died.
    await touchSessions(db, ids.slice(0, 2), later);
    const past = new Date(t0.getTime() + ALIVE_STALE_MS + 1_000);
    const kept = randomUUID();
    expect(await reserveSession(db, { id: kept, userId: u.uid, machineId, openedAt: past, now: past })).toBe(true);
    expect(await reserveSession(db, { id: randomUUID(), userId: u.uid, machineId, openedAt: past, now: past })).toBe(true);
    expect(await reserveSession(db, { id: randomUUID(), userId: u.uid, machineId, openedAt: past, now: past })).toBe(false);
    expect(await closeLostSessions(db, past)).toBeGreaterThanOrEqual(2); // (the first test's rows are stale too)
    const rows = await db.select().from(connectSessions).where(eq(connectSessions.userId, u.uid));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(ids.map((id) => byId.get(id)?.closeReason ?? null)).toEqual([null, null, 'server-lost', 'server-lost']);
    expect(byId.get(ids[3]!)?.closedAt).toEqual(t0); // closed as of its last sign of life
    // A place given back before the session opened leaves no row.
    await forgetSession(db, kept);
    expect(await db.select().from(connectSessions).where(eq(connectSessions.id, kept))).toHaveLength(0);
  });
});
