import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { manualClock } from '../src/lib/clock';
import { startTestServer, type TestServer } from './harness';
import { fakeProvider, fakeRfbServer } from './machines-fixtures';
import { seedCourseOrder, seedRoster, seedUser } from '../src/modules/courses/fixtures/seed';
import { courseHomeKey, studentSeatForCourse } from '../src/modules/courses/seats';
import type { Principal } from '../src/modules/identity/tokens';
import { CLASS_ENDED, createClassRunner, timetableJob, warmLeadMs } from '../src/modules/timetable/job';
import { classesBetween, nextClass } from '../src/modules/timetable/occurrences';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
/** Monday 4 May 2026, 07:00 in Berlin (UTC+2). */
const T0 = new Date('2026-05-04T05:00:00Z');

/**
 * Class timetable (issue 22.1) through real HTTP with an injected clock: the instructor's sessions (add, change,
 * delete; others 404; clear 400s), "Next class" for instructor and students, and the leader's job that starts a
 * class's machines before it begins (online before the start on a provider that takes time) and stops them after
 * it ends, each once whatever the servers, passes and restarts, without undoing an instructor's stop.
 */
describe('class timetable', () => {
  const clock = manualClock(T0);
  let s: TestServer;
  let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
  let provider: ReturnType<typeof fakeProvider>;
  const db = () => s.app.ctx.db;
  const warmMs = warmLeadMs('fake');
  /** A fresh runner each call: what a restarted (or another) server runs. */
  const runner = () =>
    createClassRunner({ db: db(), clock, log: s.app.ctx.log, warmMs, machines: s.app.ctx.machines, ledger: s.app.ctx.ledger, events: s.app.ctx.events, warn: () => 0 });
  const reconcile = () => s.app.ctx.machines.reconciler.runOnce();
  const call = async (who: Principal, method: string, path: string, body?: unknown) =>
    s.call(method, path, { token: await s.app.ctx.tokens.sign(who), body });

  beforeAll(async () => {
    rfb = await fakeRfbServer();
    provider = fakeProvider(rfb.port);
    s = await startTestServer({ clock, overrides: { machineProvider: provider } });
  }, 180_000);
  afterAll(async () => {
    await s?.close();
    await rfb?.close();
  });

  /** A paid German course of `vms` machines with 10 hours each, from yesterday for 30 days. */
  async function course(vms = 2) {
    const owner = await seedUser(db(), { instructor: true });
    const startAt = new Date(clock.now().getTime() - DAY);
    const orderId = await seedCourseOrder(db(), { userId: owner.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY), region: 'DE' });
    const courseId = await db().transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
    const ids = (await db().execute(sql`select id from machines where course_id = ${courseId} order by seq`)).rows.map((r) => String(r.id));
    return { owner, courseId, ids };
  }
  const machineStates = async (ids: string[]) =>
    (await db().execute(sql`select desired, observed, stop_reason, stopped_by from machines where id in (${sql.join(ids.map((i) => sql`${i}::uuid`), sql`, `)}) order by seq`)).rows as {
      desired: string;
      observed: string;
      stop_reason: string | null;
      stopped_by: string | null;
    }[];
  const runs = async (courseId: string) =>
    (await db().execute(sql`select machines_started, machines_stopped, started_at, ended_at from class_runs where course_id = ${courseId}::uuid order by starts_at`)).rows;

  it('add, change, delete: the instructor only (others 404), with clear 400s', async () => {
    clock.set(T0);
    const { owner, courseId } = await course(1);
    const other = await seedUser(db(), { instructor: true });
    const add = (who: Principal, body: object) => call(who, 'POST', '/v1/pack/timetable/add', { packId: courseId, ...body });

    const weekly = await add(owner, { kind: 'weekly', days: ['Mon', 'Wed'], start: '09:00', end: '10:50' });
    expect(weekly.status).toBe(200);
    expect(weekly.body.timeZone).toBe('Europe/Berlin');
    expect(weekly.body.sessions).toHaveLength(1);
    const session = weekly.body.sessions[0];
    expect(session).toMatchObject({ kind: 'weekly', days: ['Mon', 'Wed'], start: '09:00', end: '10:50', timeZone: 'Europe/Berlin' });
    // Monday 4 May 2026, 09:00 in Berlin is 07:00 UTC.
    expect(session.next).toEqual({ startAt: '2026-05-04T07:00:00.000Z', endAt: '2026-05-04T08:50:00.000Z' });
    expect(weekly.body.next).toEqual(session.next);

    // Someone else's course, a malformed id, another user's call: 404 as if it did not exist; no token: 401.
    expect((await add(other, { kind: 'weekly', days: ['Mon'], start: '09:00', end: '10:00' })).status).toBe(404);
    expect((await call(other, 'GET', `/v1/pack/timetable?packId=${courseId}`)).status).toBe(404);
    expect((await call(owner, 'GET', '/v1/pack/timetable?packId=not-a-uuid')).status).toBe(404);
    expect((await call(other, 'POST', '/v1/pack/timetable/delete', { packId: courseId, id: session.id })).status).toBe(404);
    expect((await call(other, 'POST', '/v1/pack/timetable/change', { packId: courseId, id: session.id, kind: 'once', date: '2026-05-05', start: '08:00', end: '09:00' })).status).toBe(404);
    expect((await s.call('GET', `/v1/pack/timetable?packId=${courseId}`)).status).toBe(401);

    const refused = async (body: object, message: RegExp) => {
      const r = await add(owner, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toMatch(message);
    };
    await refused({ kind: 'weekly', days: ['Mon'], start: '10:00', end: '09:00' }, /must end after it starts/);
    await refused({ kind: 'weekly', days: ['Mon'], start: '10:00', end: '10:00' }, /must end after it starts/);
    await refused({ kind: 'weekly', days: [], start: '09:00', end: '10:00' }, /at least one day/);
    await refused({ kind: 'weekly', days: ['Mon'], start: '9am', end: '10:00' }, /HH:MM/);
    await refused({ kind: 'weekly', days: ['Mon'], start: '06:00', end: '19:00' }, /at most 12 hours/);
    await refused({ kind: 'weekly', days: ['Mon'], start: '09:00', end: '10:00', timeZone: 'Mars/Olympus' }, /Unknown time zone/);
    await refused({ kind: 'once', date: '2026-07-01', start: '09:00', end: '10:00' }, /inside the course's dates \(03 May '26 - 02 Jun '26\)/);
    await refused({ kind: 'once', date: '2026-05-04', start: '06:00', end: '06:30' }, /already over/);
    await refused({ kind: 'once', date: '2026-02-30', start: '09:00', end: '10:00' }, /date of the class/);
    expect((await add(owner, { kind: 'fortnightly', start: '09:00', end: '10:00' })).status).toBe(400);

    const changed = await call(owner, 'POST', '/v1/pack/timetable/change', { packId: courseId, id: session.id, kind: 'once', date: '2026-05-05', start: '08:00', end: '09:30', timeZone: 'Europe/London' });
    expect(changed.status).toBe(200);
    expect(changed.body.sessions[0]).toMatchObject({ id: session.id, kind: 'once', days: [], date: '2026-05-05', start: '08:00', end: '09:30', timeZone: 'Europe/London' });
    expect(changed.body.next).toEqual({ startAt: '2026-05-05T07:00:00.000Z', endAt: '2026-05-05T08:30:00.000Z' });

    expect((await call(owner, 'POST', '/v1/pack/timetable/delete', { packId: courseId, id: session.id })).body).toEqual({ id: session.id });
    expect((await call(owner, 'POST', '/v1/pack/timetable/delete', { packId: courseId, id: session.id })).status).toBe(404);
    const empty = await call(owner, 'GET', `/v1/pack/timetable?packId=${courseId}`);
    expect(empty.body).toMatchObject({ sessions: [], next: null, warmMinutes: 15 });
  });

  it('"Next class" for the instructor and the students on the list, nobody else', async () => {
    clock.set(T0);
    const { owner, courseId } = await course(1);
    const student = await seedUser(db());
    const unverified = await seedUser(db(), { verified: false });
    const outsider = await seedUser(db());
    await seedRoster(db(), courseId, [student.email, unverified.email]);
    await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'weekly', days: ['Tue', 'Thu'], start: '14:00', end: '15:30' });
    await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'once', date: '2026-05-04', start: '18:00', end: '19:00' });
    const next = { packId: courseId, startAt: '2026-05-04T16:00:00.000Z', endAt: '2026-05-04T17:00:00.000Z' };
    const classesOf = async (who: Principal) => (await call(who, 'GET', '/v1/user/classes')).body.classes.filter((c: { packId: string }) => c.packId === courseId);
    expect(await classesOf(owner)).toEqual([next]);
    expect(await classesOf(student)).toEqual([next]);
    expect(await classesOf(unverified)).toEqual([]);
    expect(await classesOf(outsider)).toEqual([]);
    // Once that class is over, the weekly one on Tuesday is next.
    clock.set(new Date('2026-05-04T17:00:00Z'));
    expect(await classesOf(student)).toEqual([{ packId: courseId, startAt: '2026-05-05T12:00:00.000Z', endAt: '2026-05-05T13:30:00.000Z' }]);
  });

  it('weekly classes keep their wall-clock time across a DST change and stay inside the course', () => {
    const s1 = { id: 's', courseId: 'c', kind: 'weekly' as const, weekdays: 1, onDay: null, startMinute: 9 * 60, endMinute: 10 * 60, timeZone: 'Europe/Berlin' };
    const course = { startAt: new Date('2026-03-16T00:00:00+01:00'), endAt: new Date('2026-04-06T23:59:59.999+02:00') };
    const all = classesBetween(s1, course, course.startAt.getTime(), course.endAt.getTime());
    expect(all.map((c) => c.startsAt.toISOString())).toEqual([
      '2026-03-16T08:00:00.000Z', // CET
      '2026-03-23T08:00:00.000Z',
      '2026-03-30T07:00:00.000Z', // CEST from 29 March
      '2026-04-06T07:00:00.000Z',
    ]);
    expect(nextClass(s1, course, new Date('2026-04-07T00:00:00Z').getTime())).toBeNull();
  });

  it('starts the machines before the class (online at its start), stops them after it, each once', async () => {
    clock.set(T0);
    const { owner, courseId, ids } = await course(2);
    const student = await seedUser(db());
    await seedRoster(db(), courseId, [student.email]);
    // 09:00–09:50 Berlin = 07:00–07:50 UTC; the provider takes a minute to bring a desktop up.
    await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'once', date: '2026-05-04', start: '09:00', end: '09:50' });
    const startAt = new Date('2026-05-04T07:00:00Z');
    const endAt = new Date('2026-05-04T07:50:00Z');
    provider.upAfterMs = 0;

    clock.set(new Date(startAt.getTime() - warmMs - MIN));
    await runner().runLeaderPass();
    expect((await machineStates(ids)).map((m) => m.desired)).toEqual(['stopped', 'stopped']);
    expect(await runs(courseId)).toEqual([]);

    // The warm window opens: two servers' passes at once, then a restarted server's: one start, recorded.
    clock.set(new Date(startAt.getTime() - warmMs));
    const passes = await Promise.all([runner().runLeaderPass(), runner().runLeaderPass()]);
    expect(passes.map((p) => p.started).sort()).toEqual([0, 2]);
    expect((await runner().runLeaderPass()).started).toBe(0);
    expect(await runs(courseId)).toMatchObject([{ machines_started: 2, machines_stopped: null, ended_at: null }]);
    for (let i = 0; i < 50 && (await machineStates(ids)).some((m) => m.observed !== 'online'); i++) await reconcile();
    expect((await machineStates(ids)).map((m) => m.observed)).toEqual(['online', 'online']);
    expect(clock.now().getTime()).toBeLessThan(startAt.getTime());

    // The student on the list was given the first machine's home as the class's machines started (issue 22.5): their
    // first Connect gets a ticket at once, and the desktop is not restarted for them.
    const homes = await db().execute(sql`select running_home_key from machines where course_id = ${courseId}::uuid order by seq`);
    expect(homes.rows.map((r) => r.running_home_key)).toEqual([courseHomeKey(courseId, student.uid), ids[1]]);
    // (Seats run on real time, this test on 2026's clock: the seat is claimed as the ticket claims it, at the clock's
    // time; course-homes.test and courses.lxd.test go through the ticket.)
    const before = provider.calls.length;
    expect(await studentSeatForCourse(db(), student, courseId, clock.now())).toBe(ids[0]);
    await reconcile();
    expect(provider.calls.slice(before)).toEqual([]);

    // The instructor stops the machines by hand during the class: the job does not start them again for this class.
    await call(owner, 'POST', '/v1/pack/stop', { packId: courseId });
    clock.set(new Date(startAt.getTime() + 10 * MIN));
    await runner().runLeaderPass();
    await reconcile();
    expect((await machineStates(ids)).map((m) => m.desired)).toEqual(['stopped', 'stopped']);
    // Start All works during the class too.
    expect((await call(owner, 'POST', '/v1/pack/start', { packId: courseId })).body).toEqual({ status: 'WAIT' });
    await reconcile();

    for (let i = 0; i < 50 && (await machineStates(ids)).some((m) => m.observed !== 'online'); i++) await reconcile();

    // Five minutes before the end each server asks its gateway, every pass, to tell the machines' sessions (the
    // gateway tells each session once per stop time: connect-idle.test).
    const asked: { id: string; at: string; zone: string }[] = [];
    const warner = createClassRunner({ db: db(), clock, log: s.app.ctx.log, warmMs, machines: s.app.ctx.machines, ledger: s.app.ctx.ledger, events: s.app.ctx.events, warn: (id, at, zone) => (asked.push({ id, at: at.toISOString(), zone }), 1) });
    clock.set(new Date(endAt.getTime() - 6 * MIN));
    expect(await warner.warnPass()).toBe(0);
    clock.set(new Date(endAt.getTime() - 4 * MIN));
    expect(await warner.warnPass()).toBe(2);
    expect(asked.sort((a, b) => a.id.localeCompare(b.id))).toEqual([...ids].sort().map((id) => ({ id, at: endAt.toISOString(), zone: 'Europe/Berlin' })));
    clock.set(new Date(endAt.getTime() - 2 * MIN)); // a student who connected since is told too
    expect(await warner.warnPass()).toBe(2);

    // A minute before the end nothing stops; at the end every running machine stops with the class's reason.
    clock.set(new Date(endAt.getTime() - MIN));
    expect((await runner().runLeaderPass()).stopped).toBe(0);
    clock.set(endAt);
    const ends = await Promise.all([runner().runLeaderPass(), runner().runLeaderPass()]);
    expect(ends.map((p) => p.stopped).sort()).toEqual([0, 2]);
    for (let i = 0; i < 50 && (await machineStates(ids)).some((m) => m.observed !== 'offline'); i++) await reconcile();
    const after = await machineStates(ids);
    expect(after.map((m) => m.observed)).toEqual(['offline', 'offline']);
    for (const m of after) expect(m).toMatchObject({ desired: 'stopped', stop_reason: CLASS_ENDED, stopped_by: 'timetable' });
    expect(await runs(courseId)).toMatchObject([{ machines_started: 2, machines_stopped: 2 }]);

    // The dashboard shows the reason; Start All still works after the class (and the job leaves it running).
    const balance = await call(student, 'GET', '/v1/user/wallet/balance');
    expect(balance.body.balance.find((e: { packId: string }) => e.packId === courseId)?.stopReason).toBe(CLASS_ENDED);
    expect((await call(owner, 'POST', '/v1/pack/start', { packId: courseId })).body).toEqual({ status: 'WAIT' });
    clock.set(new Date(endAt.getTime() + 5 * MIN));
    await runner().runLeaderPass();
    expect((await machineStates(ids)).map((m) => m.desired)).toEqual(['running', 'running']);
    await call(owner, 'POST', '/v1/pack/stop', { packId: courseId });
    await reconcile();
  });

  it('back-to-back classes keep the machines running between them; the job runs on the leader only', async () => {
    clock.set(T0);
    const { owner, courseId, ids } = await course(1);
    await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'once', date: '2026-05-04', start: '10:00', end: '11:00' });
    await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'once', date: '2026-05-04', start: '11:00', end: '12:00' });
    const first = new Date('2026-05-04T08:00:00Z');

    // Not the leader: nothing happens.
    clock.set(first);
    await timetableJob(runner(), () => false).runOnce();
    expect(await runs(courseId)).toEqual([]);
    await timetableJob(runner(), () => true).runOnce();
    expect((await machineStates(ids))[0]!.desired).toBe('running');
    for (let i = 0; i < 50 && (await machineStates(ids))[0]!.observed !== 'online'; i++) await reconcile();

    // 11:00: the second class's warm window opened long ago, so the first's end stops nothing.
    clock.set(new Date(first.getTime() + 60 * MIN));
    await runner().runLeaderPass();
    expect((await machineStates(ids))[0]!.desired).toBe('running');
    clock.set(new Date(first.getTime() + 120 * MIN));
    await runner().runLeaderPass();
    expect((await machineStates(ids))[0]).toMatchObject({ desired: 'stopped', stop_reason: CLASS_ENDED });
    expect(await runs(courseId)).toMatchObject([
      { machines_started: 1, machines_stopped: 0 },
      { machines_started: 0, machines_stopped: 1 },
    ]);
    await reconcile();
  });

  it('a machine without hours left is not started; a class of an ended course is refused', async () => {
    clock.set(T0);
    const { owner, courseId, ids } = await course(2);
    // The first seat used all its hours (a debit of its whole lot, as metering would write minute by minute).
    await db().execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key)
      select gen_random_uuid(), machine_id, 'debit', -remaining, id, 'test-use:' || id from ledger_lots where machine_id = ${ids[0]}::uuid`);
    await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'once', date: '2026-05-04', start: '12:00', end: '13:00' });
    clock.set(new Date('2026-05-04T10:00:00Z'));
    expect((await runner().runLeaderPass()).started).toBe(1);
    expect((await machineStates(ids)).map((m) => m.desired)).toEqual(['stopped', 'running']);
    clock.set(new Date('2026-05-04T11:00:00Z'));
    await runner().runLeaderPass();
    await reconcile();

    clock.set(new Date(T0.getTime() + 40 * DAY));
    const late = await call(owner, 'POST', '/v1/pack/timetable/add', { packId: courseId, kind: 'weekly', days: ['Mon'], start: '09:00', end: '10:00' });
    expect(late.status).toBe(409);
    expect(late.body.message).toBe('The course has ended, so its timetable cannot change.');
  });
});
