import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { courseTicket } from './course-tickets';
import { startTestServer, type TestServer } from './harness';
import { fakeProvider, fakeRfbServer } from './machines-fixtures';
import { manualClock } from '../src/lib/clock';
import { mailOutbox, seats } from '../src/db/schema/index';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import type { Principal } from '../src/modules/identity/tokens';

/**
 * The roster one address at a time (issue 22): the instructor lists each address with its state and seat, adds or
 * removes one address, and resends one invitation within the upload's limits (once a day per address and course,
 * INVITE_DAILY_LIMIT a day per instructor).
 */

const DAY = 86_400_000;
const LIMIT = 4;
// Now: seats are claimed on the wall clock (connect/access.ts), and their freshness is read on this one.
const clock = manualClock(new Date());
let s: TestServer;
let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;

beforeAll(async () => {
  rfb = await fakeRfbServer();
  s = await startTestServer({ clock, env: { INVITE_DAILY_LIMIT: String(LIMIT) }, overrides: { machineProvider: fakeProvider(rfb.port) } });
});
afterAll(async () => {
  await s.close();
  await rfb.close();
});

async function user(opts: { instructor?: boolean; email?: string; verified?: boolean } = {}) {
  const p = await seedUser(s.app.ctx.db, opts);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}
/** Id tokens live 15 minutes; tests that move the clock sign again. */
const fresh = async (u: { p: Principal; token: string }) => ({ ...u, token: await s.app.ctx.tokens.sign(u.p) });

async function paidCourse(owner: Principal, vms: number, o: { startAt?: Date; days?: number } = {}) {
  const startAt = o.startAt ?? new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: owner.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + (o.days ?? 30) * DAY) });
  return s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
}

async function upload(token: string, packId: string, emails: string[]) {
  const fd = new FormData();
  fd.append('packId', packId);
  fd.append('attachment', new Blob([emails.join('\n')]), 'students.csv');
  const res = await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: token }, body: fd });
  expect(res.status).toBe(200);
  return res.json();
}

const roster = (token: string, packId: string) => s.call('GET', `/v1/pack/roster?packId=${encodeURIComponent(packId)}`, { token });
const act = (what: 'add' | 'remove' | 'resend', token: string, packId: string, email: string) =>
  s.call('POST', `/v1/pack/roster/${what}`, { token, body: { packId, email } });
const invitations = async (to: string) =>
  (await s.app.ctx.db.select().from(mailOutbox).where(and(eq(mailOutbox.kind, 'course-invitation'), eq(mailOutbox.toAddr, to)))).length;

describe('GET /v1/pack/roster', () => {
  it('lists each address with its state (invited, verified, joined, connected now) and seat', async () => {
    const teacher = await user({ instructor: true });
    const courseId = await paidCourse(teacher.p, 2);
    const unverified = await user({ email: 'b-signed-up@example.com', verified: false });
    const verified = await user({ email: 'c-verified@example.com' });
    const joiner = await user({ email: 'd-joined@example.com' });
    const present = await user({ email: 'e-connected@example.com' });
    await upload(teacher.token, courseId, ['a-no-account@example.com', unverified.p.email, verified.p.email, joiner.p.email, present.p.email]);
    const startAll = async () => {
      expect((await s.call('POST', '/v1/pack/start', { token: teacher.token, body: { packId: courseId } })).status).toBe(200);
      for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
    };

    // d used a machine in an earlier class (Stop All ended it); e sits at one now.
    await startAll();
    expect((await courseTicket(s, joiner.token, courseId)).status).toBe(200);
    expect((await s.call('POST', '/v1/pack/stop', { token: teacher.token, body: { packId: courseId } })).status).toBe(200);
    for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
    await startAll();
    expect((await courseTicket(s, present.token, courseId)).status).toBe(200);
    const [seat] = await s.app.ctx.db.select().from(seats).where(eq(seats.userId, present.p.uid));
    expect(seat).toBeTruthy();

    const res = await roster(teacher.token, courseId);
    expect(res.status).toBe(200);
    expect(res.body.max).toBe(20);
    const byEmail = Object.fromEntries(res.body.students.map((x: { email: string }) => [x.email, x]));
    expect(res.body.students.map((x: { email: string }) => x.email)).toEqual(Object.keys(byEmail).sort());
    expect(byEmail['a-no-account@example.com']).toMatchObject({ state: 'invited', signedUp: false, seat: null, invitedAt: expect.any(String) });
    expect(byEmail['b-signed-up@example.com']).toMatchObject({ state: 'invited', signedUp: true, seat: null });
    expect(byEmail['c-verified@example.com']).toMatchObject({ state: 'verified', signedUp: true, seat: null });
    expect(byEmail['d-joined@example.com']).toMatchObject({ state: 'joined', seat: null });
    expect(byEmail['e-connected@example.com']).toMatchObject({ state: 'connected', seat: expect.stringMatching(/^UE-UK-C[0-9A-F]{4}-0[12]$/) });
    expect(Object.keys(byEmail['a-no-account@example.com']).sort()).toEqual(['addedAt', 'email', 'invitedAt', 'seat', 'signedUp', 'state']);
  });

  it("answers 404 for another user's course or a malformed id, 400 without a packId, 401 without a token", async () => {
    const teacher = await user({ instructor: true });
    const courseId = await paidCourse(teacher.p, 1);
    const stranger = await user({ instructor: true });
    expect((await roster(stranger.token, courseId)).status).toBe(404);
    expect((await roster(teacher.token, 'not-a-course')).status).toBe(404);
    expect((await s.call('GET', '/v1/pack/roster', { token: teacher.token })).status).toBe(400);
    expect((await s.call('GET', `/v1/pack/roster?packId=${courseId}`)).status).toBe(401);
    expect((await roster(teacher.token, courseId)).body).toEqual({ students: [], max: 10 });
  });
});

describe('POST /v1/pack/roster/add and /remove', () => {
  it('adds one address and invites it; refuses a bad address, a duplicate, a full list, an ended course and strangers', async () => {
    const teacher = await user({ instructor: true });
    const courseId = await paidCourse(teacher.p, 1);
    const added = await act('add', teacher.token, courseId, '  New.Student@Example.com ');
    expect(added).toMatchObject({ status: 200, body: { email: 'new.student@example.com', invited: true, notices: [] } });
    expect(await invitations('new.student@example.com')).toBe(1);
    expect((await roster(teacher.token, courseId)).body.students).toMatchObject([{ email: 'new.student@example.com', state: 'invited' }]);

    expect(await act('add', teacher.token, courseId, 'new.student@example.com')).toMatchObject({ status: 409, body: { code: 'roster-duplicate' } });
    expect(await act('add', teacher.token, courseId, 'not-an-address@')).toMatchObject({ status: 400, body: { code: 'roster-email', message: 'Enter a valid e-mail address.' } });
    expect((await act('add', teacher.token, courseId, `${'x'.repeat(250)}@example.com`)).status).toBe(400);
    expect((await s.call('POST', '/v1/pack/roster/add', { token: teacher.token, body: { packId: courseId } })).status).toBe(400);
    const stranger = await user({ instructor: true });
    expect((await act('add', stranger.token, courseId, 'sneaky@example.com')).status).toBe(404);
    expect(await invitations('sneaky@example.com')).toBe(0);

    // A one-machine course holds 10 addresses.
    const fill = Array.from({ length: 9 }, (_, i) => `fill-${i}@example.com`);
    await upload(teacher.token, courseId, ['new.student@example.com', ...fill]);
    expect(await act('add', teacher.token, courseId, 'eleventh@example.com')).toMatchObject({
      status: 409,
      body: { code: 'roster-full', message: 'This course has 1 machine, so its list can have at most 10 e-mail addresses.' },
    });

    const ended = await paidCourse(teacher.p, 1, { startAt: new Date(clock.now().getTime() - 10 * DAY), days: 5 });
    expect(await act('add', teacher.token, ended, 'late@example.com')).toMatchObject({ status: 409, body: { code: 'course-ended' } });
  });

  it("removes one address: its student's seat is freed at once and their dashboard told; others stay", async () => {
    const teacher = await user({ instructor: true });
    const courseId = await paidCourse(teacher.p, 2);
    const [a, b] = await Promise.all([user(), user()]);
    await upload(teacher.token, courseId, [a.p.email, b.p.email]);
    expect((await s.call('POST', '/v1/pack/start', { token: teacher.token, body: { packId: courseId } })).status).toBe(200);
    for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
    await courseTicket(s, a.token, courseId);
    expect(await s.app.ctx.db.select().from(seats).where(eq(seats.userId, a.p.uid))).toHaveLength(1);

    const heard: string[] = [];
    const unsubscribe = s.app.ctx.events.subscribe(a.p.uid, (e) => heard.push(e.type));
    const res = await act('remove', teacher.token, courseId, a.p.email.toUpperCase());
    unsubscribe();
    expect(res).toMatchObject({ status: 200, body: { email: a.p.email, removed: true } });
    expect(heard).toContain('balance');
    expect(await s.app.ctx.db.select().from(seats).where(eq(seats.userId, a.p.uid))).toHaveLength(0);
    expect((await roster(teacher.token, courseId)).body.students.map((x: { email: string }) => x.email)).toEqual([b.p.email]);
    expect((await s.call('GET', '/v1/user/wallet/balance', { token: a.token })).body.balance).toEqual([]);

    expect(await act('remove', teacher.token, courseId, a.p.email)).toMatchObject({ status: 404, body: { code: 'roster-not-listed' } });
    const stranger = await user({ instructor: true });
    expect((await act('remove', stranger.token, courseId, b.p.email)).status).toBe(404);
    expect((await roster(teacher.token, courseId)).body.students).toHaveLength(1);
  });
});

describe('POST /v1/pack/roster/resend', () => {
  it('sends one invitation again at most once a day per address, within the daily limit', async () => {
    let teacher = await user({ instructor: true });
    const courseId = await paidCourse(teacher.p, 2);
    const first = ['r1@example.com', 'r2@example.com', 'r3@example.com', 'r4@example.com'];
    expect(await upload(teacher.token, courseId, first)).toMatchObject({ invited: LIMIT });

    // Over today's budget: the address is on the list, without an invitation; resending it is refused too.
    expect(await act('add', teacher.token, courseId, 'r5@example.com')).toMatchObject({
      status: 200,
      body: { invited: false, notices: [`No invitation was sent: you reached today's limit of ${LIMIT} invitation e-mails. Resend it tomorrow.`] },
    });
    expect((await roster(teacher.token, courseId)).body.students.find((x: { email: string }) => x.email === 'r5@example.com')).toMatchObject({ invitedAt: null });
    expect(await act('resend', teacher.token, courseId, 'r5@example.com')).toMatchObject({ status: 429, body: { code: 'invite-limit' } });
    expect(await act('resend', teacher.token, courseId, 'r1@example.com')).toMatchObject({ status: 429, body: { code: 'invite-too-soon' } });
    expect(await act('resend', teacher.token, courseId, 'not-listed@example.com')).toMatchObject({ status: 404, body: { code: 'roster-not-listed' } });
    const stranger = await user({ instructor: true });
    expect((await act('resend', stranger.token, courseId, 'r1@example.com')).status).toBe(404);
    expect(await invitations('r5@example.com')).toBe(0);
    expect(await invitations('r1@example.com')).toBe(1);

    // A day later: each may be invited again, once.
    clock.advance(DAY + 60_000);
    teacher = await fresh(teacher);
    expect(await act('resend', teacher.token, courseId, 'r5@example.com')).toMatchObject({ status: 200, body: { email: 'r5@example.com', invited: true, notices: [] } });
    expect(await act('resend', teacher.token, courseId, 'r1@example.com')).toMatchObject({ status: 200, body: { invited: true } });
    expect(await act('resend', teacher.token, courseId, 'r1@example.com')).toMatchObject({ status: 429, body: { code: 'invite-too-soon' } });
    expect(await invitations('r5@example.com')).toBe(1);
    expect(await invitations('r1@example.com')).toBe(2);
    expect((await roster(teacher.token, courseId)).body.students.find((x: { email: string }) => x.email === 'r5@example.com').invitedAt).toBe(clock.now().toISOString());
  });
});
