import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { freshDatabase } from './harness';
import type { Database } from '../src/db/client';
import { machines, seats } from '../src/db/schema/index';
import {
  claimSeat,
  holdsSeat,
  releaseSeat,
  releaseSeatSoon,
  SEAT_GRACE_MS,
  SEAT_STALE_MS,
  seatHolders,
  SEATS_FULL_MESSAGE,
  touchSeat,
} from '../src/modules/courses/seats';
import { seedCourse, seedUser } from '../src/modules/courses/fixtures/seed';

const DAY = 86_400_000;

describe('course seats', () => {
  let database: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ database, drop } = await freshDatabase());
  });
  afterAll(async () => drop());

  async function course(vms: number) {
    const owner = await seedUser(database.db, { instructor: true });
    const now = Date.now();
    return seedCourse(database.db, { ownerId: owner.uid, vms, startAt: new Date(now - DAY), endAt: new Date(now + DAY) });
  }

  it('2×VMs students claiming at once get VMs seats, never one seat twice', async () => {
    const vms = 5;
    const c = await course(vms);
    const students = await Promise.all(Array.from({ length: 2 * vms }, () => seedUser(database.db)));
    const results = await Promise.allSettled(students.map((s) => claimSeat(database.db, s.uid, c.courseId)));
    const won = results.filter((r): r is PromiseFulfilledResult<string> => r.status === 'fulfilled').map((r) => r.value);
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(vms);
    expect(new Set(won).size).toBe(vms);
    expect(new Set(won)).toEqual(new Set(c.machineIds));
    expect(lost).toHaveLength(vms);
    for (const l of lost) expect(l.reason).toMatchObject({ statusCode: 409, message: SEATS_FULL_MESSAGE });
    const rows = await database.db.select().from(seats).where(eq(seats.courseId, c.courseId));
    expect(rows).toHaveLength(vms);
  });

  it('one student claiming many times at once holds one seat', async () => {
    const c = await course(3);
    const s = await seedUser(database.db);
    const got = await Promise.all(Array.from({ length: 6 }, () => claimSeat(database.db, s.uid, c.courseId)));
    expect(new Set(got).size).toBe(1);
    expect(await database.db.select().from(seats).where(eq(seats.userId, s.uid))).toHaveLength(1);
  });

  it('gives the same machine as last time when it is free, else another one', async () => {
    const c = await course(3);
    const [a, b] = [await seedUser(database.db), await seedUser(database.db)];
    // a's machine is the second one from an earlier session
    await database.db.update(machines).set({ lastStudentId: a.uid }).where(eq(machines.id, c.machineIds[1]!));
    expect(await claimSeat(database.db, a.uid, c.courseId)).toBe(c.machineIds[1]);
    await releaseSeat(database.db, a.uid, c.courseId);
    // b takes a's machine while a is away (b had used it last), then a gets another machine
    await database.db.update(machines).set({ lastStudentId: b.uid }).where(eq(machines.id, c.machineIds[1]!));
    expect(await claimSeat(database.db, b.uid, c.courseId)).toBe(c.machineIds[1]);
    const other = await claimSeat(database.db, a.uid, c.courseId);
    expect(other).not.toBe(c.machineIds[1]);
    await releaseSeat(database.db, b.uid, c.courseId);
    await releaseSeat(database.db, a.uid, c.courseId);
    expect(await claimSeat(database.db, a.uid, c.courseId)).toBe(other); // last_student_id follows the claim
  });

  it('prefers online machines for a new student', async () => {
    const c = await course(3);
    await database.db.update(machines).set({ observed: 'online' }).where(eq(machines.id, c.machineIds[2]!));
    const s = await seedUser(database.db);
    expect(await claimSeat(database.db, s.uid, c.courseId)).toBe(c.machineIds[2]);
  });

  it('a stale seat can be taken; a touched one cannot', async () => {
    const c = await course(1);
    const [a, b] = [await seedUser(database.db), await seedUser(database.db)];
    const t0 = new Date();
    const m = await claimSeat(database.db, a.uid, c.courseId, t0);
    const later = new Date(t0.getTime() + SEAT_STALE_MS - 1000);
    await expect(claimSeat(database.db, b.uid, c.courseId, later)).rejects.toMatchObject({ statusCode: 409 });
    expect(await touchSeat(database.db, m, a.uid, later)).toBe(true);
    const afterTouch = new Date(later.getTime() + SEAT_STALE_MS - 1000);
    await expect(claimSeat(database.db, b.uid, c.courseId, afterTouch)).rejects.toMatchObject({ statusCode: 409 });
    const stale = new Date(later.getTime() + SEAT_STALE_MS + 1000);
    expect(await holdsSeat(database.db, m, a.uid, stale)).toBe(false);
    expect(await claimSeat(database.db, b.uid, c.courseId, stale)).toBe(m);
    expect(await touchSeat(database.db, m, a.uid, stale)).toBe(false);
    expect(await holdsSeat(database.db, m, b.uid, stale)).toBe(true);
    expect((await seatHolders(database.db, [c.courseId], stale)).get(m)).toBe(b.email);
  });

  it('a closed session keeps the seat for a short grace, then frees it; another open tab keeps it', async () => {
    const c = await course(1);
    const [a, b] = [await seedUser(database.db), await seedUser(database.db)];
    const t0 = new Date();
    const m = await claimSeat(database.db, a.uid, c.courseId, t0);
    await releaseSeatSoon(database.db, m, a.uid, t0);
    const inGrace = new Date(t0.getTime() + SEAT_GRACE_MS - 1000);
    await expect(claimSeat(database.db, b.uid, c.courseId, inGrace)).rejects.toMatchObject({ statusCode: 409 });
    const afterGrace = new Date(t0.getTime() + SEAT_GRACE_MS + 1000);
    expect(await claimSeat(database.db, b.uid, c.courseId, afterGrace)).toBe(m);

    // a second tab of b re-checks (touch) after the first tab closed: b keeps the seat
    await releaseSeatSoon(database.db, m, b.uid, afterGrace);
    expect(await touchSeat(database.db, m, b.uid, new Date(afterGrace.getTime() + 5000))).toBe(true);
    const later = new Date(afterGrace.getTime() + SEAT_GRACE_MS + 1000);
    await expect(claimSeat(database.db, a.uid, c.courseId, later)).rejects.toMatchObject({ statusCode: 409 });
  });
});
