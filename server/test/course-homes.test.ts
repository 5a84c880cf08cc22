import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { courseHomes, machines, seats } from '../src/db/schema/index';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { courseHomeKey, SEAT_STALE_MS } from '../src/modules/courses/seats';
import { COURSE_HOME_RETENTION_DAYS } from '../src/modules/courses/service';
import type { Principal } from '../src/modules/identity/tokens';
import { fakeProvider, fakeRfbServer } from './machines-fixtures';

/**
 * Issue 11.4: a seat moves between students, the files do not. A one-machine course: student A uses it, leaves,
 * student B takes the seat; the desktop restarts with B's home (never A's), and A gets A's home back later.
 */
const DAY = 86_400_000;
const clock = manualClock(new Date());
let s: TestServer;
let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
let provider: ReturnType<typeof fakeProvider>;
const removed: string[] = [];

beforeAll(async () => {
  rfb = await fakeRfbServer();
  provider = fakeProvider(rfb.port);
  const withHomes = Object.assign(provider, { removeHome: async (k: string) => void removed.push(k) });
  s = await startTestServer({ clock, overrides: { machineProvider: withHomes } });
});
afterAll(async () => {
  await s.close();
  await rfb.close();
});

const as = async (p: Principal) => s.app.ctx.tokens.sign(p);
const ticket = async (p: Principal, courseId: string) =>
  s.call('POST', '/v1/slot/connect/ticket', { token: await as(p), body: { url: `/v1/slot/connect?packId=${courseId}` } });
const reconcile = async (n = 4) => {
  for (let i = 0; i < n; i++) await s.app.ctx.machines.reconciler.runOnce();
};
/** The student walked away: their seat has not been seen for longer than SEAT_STALE_MS (seats run on real time). */
const leave = (p: Principal) =>
  s.app.ctx.db.update(seats).set({ lastSeenAt: new Date(Date.now() - SEAT_STALE_MS - 1000) }).where(eq(seats.userId, p.uid));
const startsOf = (machineId: string) => provider.calls.filter((c) => c.op === 'start' && c.id === machineId).map((c) => c.homeKey);

describe('one home per (course, student)', () => {
  it('restarts the desktop with the new student’s home when the seat changes hands', async () => {
    const teacher = await seedUser(s.app.ctx.db, { instructor: true });
    const a = await seedUser(s.app.ctx.db);
    const b = await seedUser(s.app.ctx.db);
    const startAt = new Date(clock.now().getTime() - DAY);
    const orderId = await seedCourseOrder(s.app.ctx.db, { userId: teacher.uid, vms: 1, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
    const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
    await s.app.ctx.db.execute(`insert into roster (course_id, email, added_at) values ('${courseId}', '${a.email}', now() - interval '1 minute'), ('${courseId}', '${b.email}', now())`);
    expect((await s.call('POST', '/v1/pack/start', { token: await as(teacher), body: { packId: courseId } })).status).toBe(200);
    await reconcile();
    const [machine] = await s.app.ctx.db.select().from(machines).where(eq(machines.courseId, courseId));
    // Start All gave the machine the home of the first student on the list who has none (issue 22.5)...
    expect(machine).toMatchObject({ observed: 'online', runningHomeKey: courseHomeKey(courseId, a.uid) });

    // ...so A's first Connect gets the running desktop at once: no 409, no restart.
    expect((await ticket(a, courseId)).status).toBe(200);
    await reconcile();
    expect(startsOf(machine!.id)).toEqual([courseHomeKey(courseId, a.uid)]);

    // A leaves; once the seat is stale, B takes it and never gets a ticket to A's desktop.
    await leave(a);
    expect(await ticket(b, courseId)).toMatchObject({ status: 409, body: { code: 'machine-starting' } });
    expect(await ticket(b, courseId)).toMatchObject({ status: 409, body: { code: 'machine-starting' } }); // still switching
    await reconcile();
    expect(provider.calls.filter((c) => c.id === machine!.id).slice(-2)).toEqual([
      { op: 'stop', id: machine!.id },
      { op: 'start', id: machine!.id, homeKey: courseHomeKey(courseId, b.uid), timeZone: 'Europe/London' },
    ]);
    expect((await ticket(b, courseId)).status).toBe(200);

    // B leaves, A comes back: A's home again.
    await leave(b);
    await ticket(a, courseId);
    await reconcile();
    expect(startsOf(machine!.id).at(-1)).toBe(courseHomeKey(courseId, a.uid));
    expect((await ticket(a, courseId)).status).toBe(200);

    // Course data retention: the homes go COURSE_HOME_RETENTION_DAYS after the course ends.
    const homes = (await s.app.ctx.db.select().from(courseHomes).where(eq(courseHomes.courseId, courseId))).map((h) => h.homeKey).sort();
    expect(homes).toEqual([courseHomeKey(courseId, a.uid), courseHomeKey(courseId, b.uid)].sort());
    clock.advance(29 * DAY);
    await s.app.ctx.courses.removeExpiredHomes();
    expect(removed.filter((k) => homes.includes(k))).toEqual([]);
    clock.advance((COURSE_HOME_RETENTION_DAYS + 1) * DAY);
    await s.app.ctx.courses.removeExpiredHomes();
    expect(removed.filter((k) => homes.includes(k)).sort()).toEqual(homes);
    expect(await s.app.ctx.db.select().from(courseHomes).where(eq(courseHomes.courseId, courseId))).toEqual([]);
  });

  it('a student who signs up after Start All takes a machine nobody has used, not one given to another student', async () => {
    const teacher = await seedUser(s.app.ctx.db, { instructor: true });
    const early = await seedUser(s.app.ctx.db);
    const startAt = new Date(clock.now().getTime() - DAY);
    const orderId = await seedCourseOrder(s.app.ctx.db, { userId: teacher.uid, vms: 2, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
    const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
    await s.app.ctx.db.execute(`insert into roster (course_id, email, added_at) values ('${courseId}', '${early.email}', now())`);
    expect((await s.call('POST', '/v1/pack/start', { token: await as(teacher), body: { packId: courseId } })).status).toBe(200);
    await reconcile();
    const [first, second] = await s.app.ctx.db.select().from(machines).where(eq(machines.courseId, courseId)).orderBy(machines.seq);
    expect(first).toMatchObject({ observed: 'online', runningHomeKey: courseHomeKey(courseId, early.uid) });
    expect(second).toMatchObject({ observed: 'online', runningHomeKey: second!.id });

    // A late student (on the list, signed up after the machines started) gets the second machine, restarted with
    // their home; the early student's machine is left alone and is theirs at once.
    const late = await seedUser(s.app.ctx.db);
    await s.app.ctx.db.execute(`insert into roster (course_id, email, added_at) values ('${courseId}', '${late.email}', now())`);
    expect(await ticket(late, courseId)).toMatchObject({ status: 409, body: { code: 'machine-starting' } });
    await reconcile();
    expect(startsOf(second!.id).at(-1)).toBe(courseHomeKey(courseId, late.uid));
    expect((await ticket(early, courseId)).status).toBe(200);
    expect(startsOf(first!.id)).toEqual([courseHomeKey(courseId, early.uid)]);
  });
});
