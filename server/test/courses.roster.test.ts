import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { INSTRUCTOR_STATIC_CONFIG } from '@hyperdesk/contract';
import { courseTicket } from './course-tickets';
import { startTestServer, type TestServer } from './harness';
import { manualClock } from '../src/lib/clock';
import { machines, mailOutbox, roster, seats } from '../src/db/schema/index';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { canConnect } from '../src/modules/connect/access';
import { SEATS_FULL_MESSAGE } from '../src/modules/courses/seats';
import type { Principal } from '../src/modules/identity/tokens';
import { fakeProvider, fakeRfbServer } from './machines-fixtures';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src/modules/courses/fixtures');
const DAY = 86_400_000;
const clock = manualClock(new Date());
let s: TestServer;
let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
let instructor: { p: Principal; token: string };

async function user(opts: { instructor?: boolean; email?: string } = {}) {
  const p = await seedUser(s.app.ctx.db, opts);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}

async function paidCourse(owner: Principal, vms: number) {
  const startAt = new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: owner.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  return s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
}

async function upload(token: string, fields: { packId?: string; name?: string; content?: string | Uint8Array }) {
  const fd = new FormData();
  if (fields.packId !== undefined) fd.append('packId', fields.packId);
  if (fields.content !== undefined) fd.append('attachment', new Blob([fields.content as BlobPart]), fields.name ?? 'students.csv');
  const res = await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: token }, body: fd });
  return { status: res.status, body: await res.json() };
}

const balance = async (token: string) => (await s.call('GET', '/v1/user/wallet/balance', { token })).body.balance as any[];
const ticket = (token: string, courseId: string) => courseTicket(s, token, courseId);
const seatOf = async (userId: string) => (await s.app.ctx.db.select().from(seats).where(eq(seats.userId, userId)))[0];

beforeAll(async () => {
  rfb = await fakeRfbServer();
  s = await startTestServer({ clock, overrides: { machineProvider: fakeProvider(rfb.port) } });
  instructor = await user({ instructor: true });
});
afterAll(async () => {
  await s.close();
  await rfb.close();
});

describe('POST /v1/pack/emails', () => {
  it('reads a messy Excel file, answers the summary and invites each student once', async () => {
    const courseId = await paidCourse(instructor.p, 3);
    const res = await upload(instructor.token, { packId: courseId, name: 'Students.CSV', content: readFileSync(path.join(FIXTURES, 'excel-comma.csv')) });
    expect(res).toEqual({ status: 200, body: { added: 3, removed: 0, total: 3, invited: 3, notices: [], invalid: [] } });
    const mails = await s.app.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.kind, 'course-invitation'));
    expect(mails.map((m) => m.toAddr).sort()).toEqual(['jane.doe@example.com', 'john.smith@example.com', 'siobhan.obrien@uni.example.ie']);
    // New addresses: the link opens the Sign Up popup with the address filled in (issue 22).
    for (const m of mails) expect(m.bodyText).toContain(`${s.config.publicUrl}/?signup=1&email=${encodeURIComponent(m.toAddr)}\n`);

    // A new upload replaces the list: one kept, two removed, one added (only the new one is invited).
    const again = await upload(instructor.token, { packId: courseId, name: 'list.txt', content: 'JANE.DOE@example.com\nnew.student@example.com\nnot-an-address@\n' });
    expect(again).toEqual({ status: 200, body: { added: 1, removed: 2, total: 2, invited: 1, notices: [], invalid: [{ line: 3, value: 'not-an-address@' }] } });
    const emails = (await s.app.ctx.db.select().from(roster).where(eq(roster.courseId, courseId))).map((r) => r.email).sort();
    expect(emails).toEqual(['jane.doe@example.com', 'new.student@example.com']);
    const invited = await s.app.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, 'new.student@example.com'));
    expect(invited).toHaveLength(1);
    expect(await s.app.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, 'jane.doe@example.com'))).toHaveLength(1);
  });

  it("invites an address that has an account to log in, a new one to sign up, each with the address in the link", async () => {
    const courseId = await paidCourse(instructor.p, 1);
    const member = await user({ email: 'Has.Account+22@example.com' });
    const res = await upload(instructor.token, { packId: courseId, content: `${member.p.email}\nno.account.yet@example.com\n` });
    expect(res.body).toMatchObject({ added: 2, invited: 2 });
    const text = async (to: string) => (await s.app.ctx.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, to)))[0]!.bodyText;
    const login = await text('has.account+22@example.com');
    expect(login).toContain(`${s.config.publicUrl}/?login=1&email=has.account%2B22%40example.com\n`);
    expect(login).toContain('Log in with your account (has.account+22@example.com)');
    const signup = await text('no.account.yet@example.com');
    expect(signup).toContain(`${s.config.publicUrl}/?signup=1&email=no.account.yet%40example.com\n`);
    expect(signup).toContain('Sign up with this e-mail address (no.account.yet@example.com)');
  });

  it('refuses other users, wrong files, oversize files and missing fields, leaving the roster alone', async () => {
    const courseId = await paidCourse(instructor.p, 1);
    await upload(instructor.token, { packId: courseId, content: 'keep@example.com' });
    const stranger = await user({ instructor: true });
    expect((await upload(stranger.token, { packId: courseId, content: 'x@example.com' })).status).toBe(404);
    expect((await upload(instructor.token, { packId: 'not-a-uuid', content: 'x@example.com' })).status).toBe(404);
    expect((await upload(instructor.token, { packId: courseId, name: 'list.xlsx', content: 'x@example.com' })).body.message).toBe(
      'The student list must be a .csv or .txt file.',
    );
    const big = await upload(instructor.token, { packId: courseId, content: 'a@example.com\n'.repeat(30_000) });
    expect(big).toMatchObject({ status: 413, body: { message: 'The file is too large (at most 256 kB).' } });
    expect((await upload(instructor.token, { packId: courseId })).status).toBe(400);
    expect((await upload(instructor.token, { content: 'x@example.com' })).status).toBe(400);
    expect(await upload(instructor.token, { packId: courseId, content: 'name,email\n\n' })).toMatchObject({
      status: 400,
      body: { message: 'No e-mail addresses were found in the file.' },
    });
    const two = new FormData();
    two.append('packId', courseId);
    two.append('attachment', new Blob(['a@example.com']), 'a.csv');
    two.append('attachment', new Blob(['b@example.com']), 'b.csv');
    const twoRes = await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: instructor.token }, body: two });
    expect(twoRes.status).toBe(413);
    const json = await s.call('POST', '/v1/pack/emails', { token: instructor.token, body: { packId: courseId } });
    expect(json.status).toBe(415);
    const unsigned = await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', body: new FormData() });
    expect(unsigned.status).toBe(401);
    expect((await s.app.ctx.db.select().from(roster).where(eq(roster.courseId, courseId))).map((r) => r.email)).toEqual(['keep@example.com']);
  });
});

describe('classroom balance and seats', () => {
  it('shows the course to its instructor and its students, seats students on different machines, and not to others', async () => {
    const courseId = await paidCourse(instructor.p, 3);
    const [a, b, c, d] = await Promise.all([user(), user(), user(), user()]);
    const outsider = await user();
    const list = [a, b, c, d].map((u) => u.p.email.toUpperCase()).join(';');
    expect((await upload(instructor.token, { packId: courseId, content: `Email\n${list}\n` })).body.added).toBe(4);

    const mine = (await balance(instructor.token)).filter((e) => e.packId === courseId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      role: 'INSTRUCTOR',
      vms: 3,
      totalHours: 10,
      timeLeft: 10,
      instanceStatus: 'offline',
      url: `/v1/slot/connect?packId=${courseId}`,
      machineConfig: { ...INSTRUCTOR_STATIC_CONFIG },
      rosterSize: 4,
    });
    expect(mine[0].seats).toHaveLength(3);
    expect(mine[0].seats.every((x: any) => x.student === null && x.instanceStatus === 'offline')).toBe(true);
    const studentView = await balance(a.token);
    expect(studentView).toEqual([expect.objectContaining({ role: 'STUDENT', packId: courseId, instanceStatus: 'offline', url: `/v1/slot/connect?packId=${courseId}` })]);
    expect(studentView[0].seats).toBeUndefined();
    expect(await balance(outsider.token)).toEqual([]);

    // Nobody connects to a machine that is not running.
    expect((await ticket(a.token, courseId)).status).toBe(409);

    expect((await s.call('POST', '/v1/pack/start', { token: instructor.token, body: { packId: courseId } })).status).toBe(200);
    for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
    expect((await balance(a.token))[0].instanceStatus).toBe('online');

    const [ta, tb, tc] = await Promise.all([ticket(a.token, courseId), ticket(b.token, courseId), ticket(c.token, courseId)]);
    expect([ta.status, tb.status, tc.status]).toEqual([200, 200, 200]);
    const seated = await Promise.all([a, b, c].map((u) => seatOf(u.p.uid)));
    expect(new Set(seated.map((x) => x!.machineId)).size).toBe(3);
    expect(await ticket(d.token, courseId)).toMatchObject({ status: 409, body: { message: SEATS_FULL_MESSAGE } });
    expect((await ticket(outsider.token, courseId)).status).toBe(404);

    const seatsView = (await balance(instructor.token)).find((e) => e.packId === courseId).seats;
    expect(seatsView.map((x: any) => x.student).sort()).toEqual([a, b, c].map((u) => u.p.email).sort());

    // The gateway's re-check: a seated student keeps their machine, not another one.
    const aMachine = seated[0]!.machineId;
    expect(await canConnect(s.app.ctx.db, a.p, aMachine)).toMatchObject({ id: aMachine });
    expect(await canConnect(s.app.ctx.db, a.p, seated[1]!.machineId)).toBeNull();

    // Removing a from the list frees the seat at once, tells a's dashboard, and the re-check refuses.
    const heard: string[] = [];
    const unsubscribe = s.app.ctx.events.subscribe(a.p.uid, (e) => heard.push(e.type));
    const res = await upload(instructor.token, { packId: courseId, content: [b, c, d].map((u) => u.p.email).join('\n') });
    unsubscribe();
    expect(res.body).toMatchObject({ added: 0, removed: 1, total: 3 });
    expect(await seatOf(a.p.uid)).toBeUndefined();
    expect(heard).toContain('balance');
    expect(await canConnect(s.app.ctx.db, a.p, aMachine)).toBeNull();
    expect(await balance(a.token)).toEqual([]);
    expect((await ticket(a.token, courseId)).status).toBe(404);
    // d gets the freed machine.
    expect((await ticket(d.token, courseId)).status).toBe(200);
    expect((await seatOf(d.p.uid))!.machineId).toBe(aMachine);

    // Stop All frees every seat.
    expect((await s.call('POST', '/v1/pack/stop', { token: instructor.token, body: { packId: courseId, terminate: true } })).body).toEqual({ status: 'STOPPED' });
    expect(await s.app.ctx.db.select().from(seats).where(eq(seats.courseId, courseId))).toEqual([]);
  });

  it('the student entry disappears when the course ends', async () => {
    const courseId = await paidCourse(instructor.p, 1);
    const st = await user();
    await upload(instructor.token, { packId: courseId, content: st.p.email });
    expect(await balance(st.token)).toHaveLength(1);
    const [m] = await s.app.ctx.db.select().from(machines).where(and(eq(machines.courseId, courseId)));
    clock.advance(31 * DAY);
    try {
      const fresh = await s.app.ctx.tokens.sign(st.p);
      expect(await balance(fresh)).toEqual([]);
      const owner = (await balance(await s.app.ctx.tokens.sign(instructor.p))).find((e) => e.packId === courseId);
      expect(owner).toMatchObject({ role: 'INSTRUCTOR', timeLeft: 0, stopReason: 'The course has ended.' });
      expect(await canConnect(s.app.ctx.db, st.p, m!.id)).toBeNull();
    } finally {
      clock.advance(-31 * DAY);
    }
  });
});
