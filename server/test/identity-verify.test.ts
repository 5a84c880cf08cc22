import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { VERIFY_MESSAGES } from '@hyperdesk/contract';
import { emailVerifications, mailOutbox, seats, users } from '../src/db/schema/index';
import { manualClock } from '../src/lib/clock';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { canConnect } from '../src/modules/connect/access';
import type { Principal } from '../src/modules/identity/tokens';
import { courseTicket } from './course-tickets';
import { startTestServer, type TestServer } from './harness';
import { fromIp, randomIp, signUp, uniqueEmail, withCookie } from './identity-helpers';
import { fakeProvider, fakeRfbServer } from './machines-fixtures';

/** Issue 11 item 2: roster access only for proven addresses; sign-up and invitation links prove them. */

const DAY = 86_400_000;
const clock = manualClock(new Date());
const PUBLIC_URL = 'https://desk.example.org';
let s: TestServer;
let rfb: Awaited<ReturnType<typeof fakeRfbServer>>;
let instructor: Principal;

beforeAll(async () => {
  rfb = await fakeRfbServer();
  s = await startTestServer({ clock, env: { TRUST_PROXY: 'true', PUBLIC_URL }, overrides: { machineProvider: fakeProvider(rfb.port) } });
  instructor = await seedUser(s.app.ctx.db, { instructor: true });
});
afterAll(async () => {
  await s.close();
  await rfb.close();
});

type MailRow = typeof mailOutbox.$inferSelect;
const mailsTo = (email: string, kind: string) =>
  s.database.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, email)).orderBy(asc(mailOutbox.createdAt)).then((rows) => rows.filter((m) => m.kind === kind));
const tokenIn = (mail: MailRow) => new RegExp(`${PUBLIC_URL}/verify-email\\?token=([\\w-]+)`).exec(mail.bodyText)![1]!;
const verify = (token: string, idtoken?: string) =>
  s.call('POST', '/v1/auth/verify-email', { body: { token }, headers: { ...fromIp(randomIp()), ...(idtoken ? { idtoken } : {}) } });
/** An id token at the test clock's current time (the one from sign-up expires when the clock moves on). */
const tokenOf = (u: { user: { uid: string }; email: string }) =>
  s.app.ctx.tokens.sign({ uid: u.user.uid, email: u.email, name: 'A', instructor: false, admin: false, emailVerified: false });
const refresh = async (cookie: string) => (await s.call('POST', '/v1/auth/refresh', { headers: withCookie(cookie) })).body.accessToken as string;
const status = async (token: string) => (await s.call('GET', '/v1/user/email-verification', { token })).body;
const balance = async (token: string) => (await s.call('GET', '/v1/user/wallet/balance', { token })).body.balance as { role: string; packId: string }[];
const ticket = (token: string, courseId: string) => courseTicket(s, token, courseId);
const resend = (token: string, ip = randomIp()) => s.call('POST', '/v1/auth/verify-email/resend', { token, headers: fromIp(ip) });
const error = (code: keyof typeof VERIFY_MESSAGES) => expect.objectContaining({ code, message: VERIFY_MESSAGES[code] });

/** A running course (machines online) whose roster holds these addresses. */
async function runningCourse(emails: string[], vms = 2) {
  const token = await s.app.ctx.tokens.sign(instructor); // at the test clock's time
  const startAt = new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: instructor.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const fd = new FormData();
  fd.append('packId', courseId);
  fd.append('attachment', new Blob([emails.join('\n')]), 'students.txt');
  expect((await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: token }, body: fd })).status).toBe(200);
  expect((await s.call('POST', '/v1/pack/start', { token, body: { packId: courseId } })).status).toBe(200);
  for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
  return courseId;
}

describe('sign-up verification link', () => {
  it('mails a single-use 24-hour link (hash stored), and verifying updates the claim at the next refresh', async () => {
    const u = await signUp(s, { name: 'Katherine Johnson', ip: randomIp() });
    expect(decodeJwt(u.token).email_verified).toBe(false);
    expect(await status(u.token)).toEqual({ emailVerified: false, rosterCourses: 0 });
    const [mail, ...more] = await mailsTo(u.email, 'email-verification');
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ subject: 'Verify your Hyperdesk e-mail address' });
    const token = tokenIn(mail!);
    expect(mail!.bodyHtml).toContain(`href="${PUBLIC_URL}/verify-email?token=${token}"`);
    const stored = await s.database.db.select().from(emailVerifications).where(eq(emailVerifications.email, u.email));
    expect(stored).toEqual([
      expect.objectContaining({ tokenHash: createHash('sha256').update(token).digest('hex'), userId: u.user.uid, expiresAt: new Date(clock.now().getTime() + DAY), usedAt: null }),
    ]);

    // Only for the link's account signed in (the link is not spent by the refusal).
    expect(await verify(token)).toMatchObject({ status: 401, body: error('verify/login-required') });
    expect(await verify(token, u.token)).toMatchObject({ status: 200, body: { ok: true, email: u.email } });
    expect(await status(u.token)).toEqual({ emailVerified: true, rosterCourses: 0 });
    expect(decodeJwt(await refresh(u.cookie)).email_verified).toBe(true);
    // Replayed: the link worked once.
    expect(await verify(token, u.token)).toMatchObject({ status: 400, body: error('verify/link-invalid') });
  });

  it('refuses an expired link, and an unknown one', async () => {
    const u = await signUp(s, { ip: randomIp() });
    const token = tokenIn((await mailsTo(u.email, 'email-verification'))[0]!);
    clock.advance(DAY + 1000);
    expect(await verify(token, await tokenOf(u))).toMatchObject({ status: 400, body: error('verify/link-invalid') });
    expect(await verify('not-a-token')).toMatchObject({ status: 400, body: error('verify/link-invalid') });
    expect((await s.database.db.select().from(users).where(eq(users.id, u.user.uid)))[0]!.emailVerifiedAt).toBeNull();
  });

  it("does not let a signed-in user spend another account's link, and the link verifies only its own account", async () => {
    const a = await signUp(s, { ip: randomIp() });
    const b = await signUp(s, { ip: randomIp() });
    const aToken = tokenIn((await mailsTo(a.email, 'email-verification'))[0]!);
    expect(await verify(aToken, b.token)).toMatchObject({ status: 403, body: error('verify/other-account') });
    expect(await status(b.token)).toEqual({ emailVerified: false, rosterCourses: 0 });
    expect(await status(a.token)).toEqual({ emailVerified: false, rosterCourses: 0 });
    // Not spent by the refusal: its owner (signed in or not) still can.
    expect((await verify(aToken, a.token)).status).toBe(200);
    expect(await status(a.token)).toMatchObject({ emailVerified: true });
    expect(await status(b.token)).toMatchObject({ emailVerified: false });
  });

  it('a password reset proves the address too', async () => {
    const u = await signUp(s, { ip: randomIp() });
    expect((await s.call('POST', '/v1/auth/forgot', { body: { email: u.email }, headers: fromIp(randomIp()) })).status).toBe(200);
    const reset = /reset-password\?token=([\w-]+)/.exec((await mailsTo(u.email, 'password-reset'))[0]!.bodyText)![1]!;
    expect((await s.call('POST', '/v1/auth/reset', { body: { token: reset, password: 'another-456' }, headers: fromIp(randomIp()) })).status).toBe(200);
    expect(await status(u.token)).toMatchObject({ emailVerified: true });
  });
});

describe('resend', () => {
  it('mails at most 3 links an hour per user, answering the same; none once verified; 429 per IP', async () => {
    const u = await signUp(s, { ip: randomIp() });
    for (let i = 0; i < 5; i++) expect(await resend(u.token)).toMatchObject({ status: 200, body: { ok: true } });
    expect(await mailsTo(u.email, 'email-verification')).toHaveLength(1 + 3);
    clock.advance(60 * 60_000 + 1000);
    const later = await tokenOf(u);
    expect((await resend(later)).status).toBe(200);
    const all = await mailsTo(u.email, 'email-verification');
    expect(all).toHaveLength(5);
    // Every resent link works until used (the newest here).
    expect((await verify(tokenIn(all[4]!), later)).status).toBe(200);
    // Verifying spends the other open links of the address.
    expect(await verify(tokenIn(all[0]!), later)).toMatchObject({ status: 400, body: error('verify/link-invalid') });
    clock.advance(60 * 60_000 + 1000);
    const fresh = await s.app.ctx.tokens.sign({ uid: u.user.uid, email: u.email, name: 'A', instructor: false, admin: false, emailVerified: true });
    expect((await resend(fresh)).status).toBe(200);
    expect(await mailsTo(u.email, 'email-verification')).toHaveLength(5);

    const ip = randomIp();
    const others = await Promise.all(Array.from({ length: 11 }, () => signUp(s, { ip: randomIp() })));
    const answers = [];
    for (const o of others) answers.push((await resend(o.token, ip)).status);
    expect(answers).toEqual([...Array(10).fill(200), 429]);
    expect((await s.call('POST', '/v1/auth/verify-email/resend', {})).status).toBe(401);
  });
});

describe('roster access needs a verified address', () => {
  it('an unverified sign-up with a roster address gets no STUDENT entry and no ticket; after verifying it does', async () => {
    const email = uniqueEmail('student');
    const courseId = await runningCourse([email]);
    const u = await signUp(s, { email, ip: randomIp() });
    expect(await balance(u.token)).toEqual([]);
    expect((await ticket(u.token, courseId)).status).toBe(404);
    expect(await s.database.db.select().from(seats).where(eq(seats.userId, u.user.uid))).toEqual([]);
    expect(await status(u.token)).toEqual({ emailVerified: false, rosterCourses: 1 });

    expect((await verify(tokenIn((await mailsTo(email, 'email-verification'))[0]!), u.token)).status).toBe(200);
    // The old id token still says unverified (checks read the claim); the refreshed one opens the course.
    expect((await ticket(u.token, courseId)).status).toBe(404);
    const fresh = await refresh(u.cookie);
    expect((await balance(fresh)).map((e) => [e.role, e.packId])).toEqual([['STUDENT', courseId]]);
    expect((await ticket(fresh, courseId)).status).toBe(200);
    expect(await status(fresh)).toEqual({ emailVerified: true, rosterCourses: 0 });
  });

  it('an unverified principal cannot keep a seated machine either (the gateway re-check)', async () => {
    const p = await seedUser(s.app.ctx.db);
    const courseId = await runningCourse([p.email]);
    const token = await s.app.ctx.tokens.sign(p);
    expect((await ticket(token, courseId)).status).toBe(200);
    const [seat] = await s.database.db.select().from(seats).where(eq(seats.userId, p.uid));
    expect(await canConnect(s.app.ctx.db, p, seat!.machineId)).toMatchObject({ id: seat!.machineId });
    expect(await canConnect(s.app.ctx.db, { ...p, emailVerified: false }, seat!.machineId)).toBeNull();
  });

  it('the invitation link verifies whoever holds the address: not before sign-up, once after; an existing account at once', async () => {
    const later = uniqueEmail('later');
    const existing = await signUp(s, { ip: randomIp() });
    const courseId = await runningCourse([later, existing.email]);
    const invitations = async (email: string) => mailsTo(email, 'course-invitation');
    const [inviteLater] = await invitations(later);
    // No account yet: the link opens Sign Up with the address (issue 22); the existing account's opens Login.
    expect(inviteLater!.bodyText).toContain(`${PUBLIC_URL}/?signup=1&email=${encodeURIComponent(later)}`);
    expect((await invitations(existing.email))[0]!.bodyText).toContain(`${PUBLIC_URL}/?login=1&email=${encodeURIComponent(existing.email)}`);
    const laterToken = tokenIn(inviteLater!);

    // Nobody has the address yet: nothing to verify, and the link stays usable.
    expect(await verify(laterToken)).toMatchObject({ status: 404, body: error('verify/no-account') });
    const u = await signUp(s, { email: later, ip: randomIp() });
    expect((await ticket(u.token, courseId)).status).toBe(404);
    expect(await verify(laterToken, u.token)).toMatchObject({ status: 200, body: { email: later } });
    expect((await ticket(await refresh(u.cookie), courseId)).status).toBe(200);
    expect((await verify(laterToken, u.token)).status).toBe(400);

    // The account existed before the invitation: opening the link verifies it.
    expect((await verify(tokenIn((await invitations(existing.email))[0]!), existing.token)).status).toBe(200);
    expect((await balance(await refresh(existing.cookie))).map((e) => e.role)).toEqual(['STUDENT']);
  });

  it('a squatter of a student address is not verified when the student opens the invitation; a reset hands the student the account', async () => {
    const email = uniqueEmail('squatted');
    const squatter = await signUp(s, { email, password: 'squatter-1', ip: randomIp() });
    const courseId = await runningCourse([email]);
    const invite = tokenIn((await mailsTo(email, 'course-invitation'))[0]!);
    // The student opens the invitation without the squatter's session: nothing is verified, the link stays.
    expect(await verify(invite)).toMatchObject({ status: 401, body: error('verify/login-required') });
    expect(await status(squatter.token)).toEqual({ emailVerified: false, rosterCourses: 1 });
    expect((await ticket(await refresh(squatter.cookie), courseId)).status).toBe(404);
    // "Forgot password" from the student's mailbox: the address is proven and the squatter's sessions end.
    expect((await s.call('POST', '/v1/auth/forgot', { body: { email }, headers: fromIp(randomIp()) })).status).toBe(200);
    const reset = /reset-password\?token=([\w-]+)/.exec((await mailsTo(email, 'password-reset'))[0]!.bodyText)![1]!;
    expect((await s.call('POST', '/v1/auth/reset', { body: { token: reset, password: 'student-42' }, headers: fromIp(randomIp()) })).status).toBe(200);
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(squatter.cookie) })).status).toBe(401);
    const student = await s.call('POST', '/v1/auth/login', { body: { email, password: 'student-42' }, headers: fromIp(randomIp()) });
    expect(decodeJwt(student.body.accessToken).email_verified).toBe(true);
    expect((await ticket(student.body.accessToken, courseId)).status).toBe(200);
  });
});
