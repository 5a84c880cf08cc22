import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { courses, ledgerEntries, machines, orders } from '../src/db/schema/index';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { COURSE_ENDED, COURSE_NOT_STARTED, HOURS_UNAVAILABLE, NO_HOURS_LEFT, PRICE_CHANGED, VMS_MESSAGE } from '../src/modules/courses/service';
import type { Principal } from '../src/modules/identity/tokens';
import { fakeProvider, fakeRfbServer } from './machines-fixtures';
import { pathOf, submitCard } from './commerce-fixtures';

const DAY = 86_400_000;
const clock = manualClock(new Date());
let s: TestServer;
let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
let instructor: { p: Principal; token: string };
let other: { p: Principal; token: string };
let plain: { p: Principal; token: string };

async function user(opts: { instructor?: boolean; email?: string } = {}) {
  const p = await seedUser(s.app.ctx.db, opts);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}

/** A paid course order fulfilled the way the payment webhook does it. */
async function paidCourse(owner: Principal, vms: number, o: { startIn?: number; days?: number; hours?: number } = {}) {
  const startAt = new Date(clock.now().getTime() + (o.startIn ?? -DAY));
  const expiresAt = new Date(startAt.getTime() + (o.days ?? 30) * DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: owner.uid, vms, hours: o.hours ?? 10, startAt, expiresAt });
  const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const ids = (await s.app.ctx.db.select({ id: machines.id }).from(machines).where(eq(machines.courseId, courseId))).map((r) => r.id);
  return { orderId, courseId, ids };
}

const desiredOf = async (courseId: string) =>
  (await s.app.ctx.db.select({ desired: machines.desired }).from(machines).where(eq(machines.courseId, courseId))).map((r) => r.desired);

beforeAll(async () => {
  rfb = await fakeRfbServer();
  s = await startTestServer({ clock, overrides: { machineProvider: fakeProvider(rfb.port) } });
  instructor = await user({ instructor: true });
  other = await user({ instructor: true });
  plain = await user();
});
afterAll(async () => {
  await s.close();
  await rfb.close();
});

describe('POST /v1/pack/cost', () => {
  const body = (extra: Record<string, unknown> = {}) => ({
    Platform: 'Unreal Engine',
    VMs: 3,
    StartAt: clock.now().getTime(),
    ExpiresAt: clock.now().getTime() + 14 * DAY,
    Region: 'UK',
    ...extra,
  });
  const cost = (b: unknown, token = instructor.token) => s.call('POST', '/v1/pack/cost', { token, body: b });

  it('prices every runtime for the machines from the catalog of the country', async () => {
    const res = await cost(body());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ prices: { '10': 44.97, '25': 104.97, '50': 194.97, '100': 359.97 } });
    const de = await cost(body({ Region: 'DE', VMs: 10, Platform: 'Unity Engine' }));
    expect(de.body.prices['10']).toBe(152.91); // 16.99 × 10 less 10 %
  });

  it('is for instructors only, and signed-in users only', async () => {
    expect((await cost(body(), plain.token)).status).toBe(403);
    expect((await s.call('POST', '/v1/pack/cost', { body: body() })).status).toBe(401);
  });

  it("refuses 0 and 41 students with the spec's message, and bad shapes", async () => {
    for (const VMs of [0, 41, -1]) {
      const res = await cost(body({ VMs }));
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(VMS_MESSAGE);
    }
    expect((await cost(body({ VMs: 2.5 }))).status).toBe(400);
    expect((await cost(body({ Region: 'FR' }))).status).toBe(400);
    expect((await cost(body({ Platform: 'Blender' }))).status).toBe(400);
    expect((await cost(body({ StartAt: 'tomorrow' }))).status).toBe(400);
    expect((await cost({ VMs: 3 })).status).toBe(400);
  });

  it('refuses dates in the past, an end before the start and courses over a year', async () => {
    const t = clock.now().getTime();
    const past = await cost(body({ StartAt: t - 3 * DAY, ExpiresAt: t + DAY }));
    expect(past).toMatchObject({ status: 400, body: { message: 'The start date cannot be in the past.' } });
    expect((await cost(body({ StartAt: t + 2 * DAY, ExpiresAt: t + DAY }))).body.message).toBe('The end date must be after the start date.');
    expect((await cost(body({ StartAt: t, ExpiresAt: t + 400 * DAY }))).body.message).toBe('A course can last at most one year.');
  });
});

describe('POST /v1/pack/recharge', () => {
  const order = (extra: Record<string, unknown> = {}) => ({
    Platform: 'Unreal Engine',
    VMs: 2,
    TotalHours: 25,
    StartAt: clock.now().getTime(),
    ExpiresAt: clock.now().getTime() + 7 * DAY,
    Region: 'UK',
    Price: 69.98,
    success_url: `${s.config.publicUrl}/success`,
    cancel_url: `${s.config.publicUrl}/failed`,
    ...extra,
  });
  const recharge = (b: unknown, token = instructor.token) => s.call('POST', '/v1/pack/recharge', { token, body: b });

  it('opens a checkout for the price the server computed and records a course order', async () => {
    const res = await recharge(order());
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/^http/);
    const [o] = await s.app.ctx.db.select().from(orders).where(and(eq(orders.userId, instructor.p.uid), eq(orders.kind, 'course')));
    expect(o).toMatchObject({ kind: 'course', vms: 2, hours: 25, amountMinor: 6998, currency: 'GBP', status: 'pending', region: 'UK' });
  });

  it('paying the checkout creates the course with its machines and hours (through the webhook path)', async () => {
    const buyer = await user({ instructor: true });
    const res = await recharge(order({ VMs: 3, TotalHours: 10, Price: 44.97 }), buyer.token);
    expect(res.status).toBe(200);
    const paid = await submitCard(s.base, pathOf(res.body.url), { number: '4242 4242 4242 4242' });
    expect(paid.status).toBe(303);
    const orderId = new URL(paid.location!).searchParams.get('orderId')!;
    const status = await s.call('POST', '/v1/user/order/status', { token: buyer.token, body: { orderId } });
    expect(status.body).toMatchObject({ status: 'paid', pack: { region: 'UK', price: 44.97, hours: 10 } });
    const [o] = await s.app.ctx.db.select().from(orders).where(eq(orders.id, orderId));
    expect(o!.courseId).toBeTruthy();
    const ms = await s.app.ctx.db.select().from(machines).where(eq(machines.courseId, o!.courseId!));
    expect(ms).toHaveLength(3);
    const entry = (await s.call('GET', '/v1/user/wallet/balance', { token: buyer.token })).body.balance;
    expect(entry).toEqual([expect.objectContaining({ role: 'INSTRUCTOR', packId: o!.courseId, vms: 3, totalHours: 10, timeLeft: 10 })]);
  });

  it('refuses a tampered price and a runtime that is not offered', async () => {
    expect(await recharge(order({ Price: 1 }))).toMatchObject({ status: 400, body: { message: PRICE_CHANGED } });
    expect(await recharge(order({ Price: 69.97 }))).toMatchObject({ status: 400, body: { message: PRICE_CHANGED } });
    expect(await recharge(order({ TotalHours: 12 }))).toMatchObject({ status: 400, body: { message: HOURS_UNAVAILABLE } });
  });

  it('refuses foreign return URLs, non-instructors, bad students and past dates', async () => {
    expect((await recharge(order({ success_url: 'https://evil.example/success' }))).status).toBe(400);
    expect((await recharge(order(), plain.token)).status).toBe(403);
    expect((await recharge(order({ VMs: 41 }))).body.message).toBe(VMS_MESSAGE);
    expect((await recharge(order({ VMs: 0 }))).body.message).toBe(VMS_MESSAGE);
    const t = clock.now().getTime();
    expect((await recharge(order({ StartAt: t - 5 * DAY, ExpiresAt: t - DAY }))).status).toBe(400);
  });
});

describe('course fulfilment', () => {
  it('creates the course, VMs named machines and their hours expiring at the end, once', async () => {
    const startAt = new Date(clock.now().getTime() + DAY);
    const expiresAt = new Date(startAt.getTime() + 10 * DAY);
    const orderId = await seedCourseOrder(s.app.ctx.db, { userId: instructor.p.uid, vms: 3, hours: 25, startAt, expiresAt });
    const run = () => s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
    const ids = await Promise.all([run(), run(), run()]);
    expect(new Set(ids).size).toBe(1);
    const courseId = ids[0]!;
    const [course] = await s.app.ctx.db.select().from(courses).where(eq(courses.id, courseId));
    expect(course).toMatchObject({ ownerUserId: instructor.p.uid, vms: 3, hoursPerMachine: 25, startAt, endAt: expiresAt });
    expect(course!.name).toMatch(/^Course \d\d [A-Z][a-z]{2} '\d\d$/);
    const ms = await s.app.ctx.db.select().from(machines).where(eq(machines.courseId, courseId)).orderBy(machines.seq);
    expect(ms.map((m) => m.seq)).toEqual([1, 2, 3]);
    expect(ms[0]!.name).toMatch(/^UE-UK-C[0-9A-F]{4}-01$/);
    const credits = await s.app.ctx.db.select().from(ledgerEntries).where(eq(ledgerEntries.orderId, orderId));
    expect(credits).toHaveLength(3);
    for (const c of credits) expect(c).toMatchObject({ kind: 'credit', minutes: 25 * 60, expiresAt });
    expect(credits.map((c) => c.idempotencyKey).sort()).toEqual([1, 2, 3].map((n) => `order:${orderId}:${n}`));
  });
});

describe('POST /v1/pack/start and /v1/pack/stop', () => {
  const start = (packId: string, token = instructor.token) => s.call('POST', '/v1/pack/start', { token, body: { packId } });
  const stop = (packId: string, token = instructor.token) => s.call('POST', '/v1/pack/stop', { token, body: { packId, terminate: true } });

  it('starts all machines of the course and stops them all', async () => {
    const c = await paidCourse(instructor.p, 3);
    expect((await start(c.courseId)).body).toEqual({ status: 'WAIT' });
    expect(await desiredOf(c.courseId)).toEqual(['running', 'running', 'running']);
    expect((await stop(c.courseId)).body).toEqual({ status: 'STOPPED' });
    expect(await desiredOf(c.courseId)).toEqual(['stopped', 'stopped', 'stopped']);
  });

  it("answers 404 for another user's course, an unknown id and a malformed id", async () => {
    const c = await paidCourse(instructor.p, 2);
    expect((await start(c.courseId, other.token)).status).toBe(404);
    expect((await stop(c.courseId, other.token)).status).toBe(404);
    expect((await start('8d0c7c55-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await start("x' or 1=1 --")).status).toBe(404);
    expect((await s.call('POST', '/v1/pack/start', { token: instructor.token, body: {} })).status).toBe(400);
    expect(await desiredOf(c.courseId)).toEqual(['stopped', 'stopped']);
  });

  it('refuses to start before the start date and after the end', async () => {
    const early = await paidCourse(instructor.p, 1, { startIn: 2 * DAY });
    expect(await start(early.courseId)).toMatchObject({ status: 409, body: { message: COURSE_NOT_STARTED } });
    const ended = await paidCourse(instructor.p, 1, { startIn: -10 * DAY, days: 5 });
    expect(await start(ended.courseId)).toMatchObject({ status: 409, body: { message: COURSE_ENDED } });
    expect(await desiredOf(early.courseId)).toEqual(['stopped']);
  });

  it('refuses to start machines without hours', async () => {
    const c = await paidCourse(instructor.p, 1);
    await s.app.ctx.db.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key)
      select gen_random_uuid(), machine_id, 'debit', -minutes, id, 'test-drain:' || id from ledger_entries where machine_id = ${c.ids[0]!}`);
    expect(await start(c.courseId)).toMatchObject({ status: 409, body: { message: NO_HOURS_LEFT } });
  });

  it('40 parallel Start All requests ask for exactly the 40 machines of the course', async () => {
    const c = await paidCourse(instructor.p, 40);
    const bystander = await paidCourse(other.p, 2);
    const answers = await Promise.all(Array.from({ length: 40 }, () => start(c.courseId)));
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    for (const a of answers) expect(a.body.status).toBe('WAIT');
    const rows = await s.app.ctx.db.select().from(machines).where(eq(machines.courseId, c.courseId));
    expect(rows).toHaveLength(40);
    expect(rows.filter((m) => m.desired === 'running' && m.observed === 'processing')).toHaveLength(40);
    expect(await desiredOf(bystander.courseId)).toEqual(['stopped', 'stopped']);
    await stop(c.courseId);
  });
});

describe('course end', () => {
  it('the job stops the machines of ended courses with the reason, and only those', async () => {
    const c = await paidCourse(instructor.p, 2, { days: 2 });
    const later = await paidCourse(instructor.p, 1, { days: 30 });
    expect((await s.call('POST', '/v1/pack/start', { token: instructor.token, body: { packId: c.courseId } })).status).toBe(200);
    expect((await s.call('POST', '/v1/pack/start', { token: instructor.token, body: { packId: later.courseId } })).status).toBe(200);
    clock.advance(DAY + 60_000);
    expect(await s.app.ctx.courses.endDueCourses()).toBeGreaterThanOrEqual(1);
    const rows = await s.app.ctx.db.select().from(machines).where(eq(machines.courseId, c.courseId));
    for (const m of rows) expect(m).toMatchObject({ desired: 'stopped', stopReason: COURSE_ENDED });
    expect(await desiredOf(later.courseId)).toEqual(['running']);
    await s.app.ctx.courses.endDueCourses(); // idempotent
    expect(await desiredOf(c.courseId)).toEqual(['stopped', 'stopped']);
    clock.advance(-(DAY + 60_000));
  });
});
