import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { asc, eq } from 'drizzle-orm';
import { mailOutbox, passwordResets } from '../src/db/schema/index';
import { manualClock } from '../src/lib/clock';
import { startTestServer, type TestServer } from './harness';
import { createUser, fromIp, randomIp, sessionCookie, uniqueEmail, withCookie } from './identity-helpers';

const clock = manualClock(new Date('2030-03-01T09:00:00Z'));
const PUBLIC_URL = 'https://desk.example.org';
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ clock, env: { TRUST_PROXY: 'true', PUBLIC_URL } });
});
afterAll(async () => s.close());

const error = (code: keyof typeof AUTH_MESSAGES) => expect.objectContaining({ code, message: AUTH_MESSAGES[code] });
const forgot = (email: unknown, ip = randomIp()) => s.call('POST', '/v1/auth/forgot', { body: { email }, headers: fromIp(ip) });
const reset = (token: string, password: string) => s.call('POST', '/v1/auth/reset', { body: { token, password }, headers: fromIp(randomIp()) });
const login = (email: string, password: string) => s.call('POST', '/v1/auth/login', { body: { email, password }, headers: fromIp(randomIp()) });
const refresh = (cookie: string) => s.call('POST', '/v1/auth/refresh', { headers: withCookie(cookie) });

type MailRow = typeof mailOutbox.$inferSelect;
const mailsTo = (email: string) => s.database.db.select().from(mailOutbox).where(eq(mailOutbox.toAddr, email)).orderBy(asc(mailOutbox.createdAt));
const linkIn = (mail: MailRow) => /https:\/\/\S+\/reset-password\?token=([\w-]+)/.exec(mail.bodyText)!;

describe('forgot password and reset links', () => {
  it('e-mails a single-use link to a real account and stores only its hash', async () => {
    const u = await createUser(s, { name: 'Mary Jackson' });
    const res = await forgot(` ${u.email.toUpperCase()} `);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const [mail, ...more] = await mailsTo(u.email);
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ kind: 'password-reset', subject: 'Reset your Hyperdesk password' });
    expect(mail!.sentAt).toEqual(clock.now()); // without SMTP the outbox row is the delivery
    const [link, token] = linkIn(mail!);
    expect(link).toBe(`${PUBLIC_URL}/reset-password?token=${token}`);
    expect(mail!.bodyHtml).toContain(`href="${link}"`);
    expect(mail!.bodyText).toContain('Hello Mary Jackson');
    const stored = await s.database.db.select().from(passwordResets).where(eq(passwordResets.userId, u.row.id));
    expect(stored).toEqual([
      { tokenHash: createHash('sha256').update(token!).digest('hex'), userId: u.row.id, expiresAt: new Date(clock.now().getTime() + 3_600_000), usedAt: null },
    ]);
  });

  it('answers the same for an unknown e-mail and sends nothing', async () => {
    const email = uniqueEmail('nobody');
    const res = await forgot(email);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await mailsTo(email)).toEqual([]);
  });

  it('refuses a malformed address or body with 400', async () => {
    expect((await forgot('not-an-address')).body).toEqual(error('auth/invalid-email'));
    expect((await forgot('   ')).status).toBe(400);
    expect((await forgot('x'.repeat(10_000))).status).toBe(400);
    expect((await forgot(7)).status).toBe(400);
    expect((await s.call('POST', '/v1/auth/forgot', { raw: '{"email":' })).status).toBe(400);
    expect((await s.call('POST', '/v1/auth/forgot', { body: {} })).status).toBe(400);
  });

  it('resets the password once, signs out every session and spends the other links', async () => {
    const u = await createUser(s);
    const second = await login(u.email, u.password);
    await forgot(u.email);
    await forgot(u.email);
    const [first, other] = (await mailsTo(u.email)).map((m) => linkIn(m)[1]!);

    const weak = await reset(first!, '12345');
    expect(weak.status).toBe(400);
    expect(weak.body).toEqual(error('auth/weak-password'));
    const ok = await reset(first!, 'brand-new-pass');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true });

    expect((await login(u.email, u.password)).status).toBe(401);
    expect((await login(u.email, 'brand-new-pass')).status).toBe(200);
    expect((await refresh(u.cookie)).status).toBe(401);
    expect((await refresh(sessionCookie(second.headers)!)).status).toBe(401);

    const reused = await reset(first!, 'another-pass');
    expect(reused.status).toBe(400);
    expect(reused.body).toEqual(error('auth/reset-failed'));
    expect((await reset(other!, 'another-pass')).body).toEqual(error('auth/reset-failed'));
    expect((await reset('made-up-token', 'another-pass')).body).toEqual(error('auth/reset-failed'));
  });

  it('refuses a link after one hour', async () => {
    const u = await createUser(s);
    await forgot(u.email);
    const [token] = (await mailsTo(u.email)).map((m) => linkIn(m)[1]!);
    clock.advance(61 * 60_000);
    expect((await reset(token!, 'late-password')).body).toEqual(error('auth/reset-failed'));
    expect((await login(u.email, u.password)).status).toBe(200);
  });

  it('answers bad reset input with 400', async () => {
    for (const body of [{ token: 'x' }, { token: 'x'.repeat(10_000), password: 'long-enough' }, { token: 1, password: 'long-enough' }]) {
      expect((await s.call('POST', '/v1/auth/reset', { body })).status).toBe(400);
    }
  });

  it('limits links per address silently and requests per client address with 429', async () => {
    const u = await createUser(s);
    for (let i = 0; i < 5; i++) expect((await forgot(u.email)).body).toEqual({ ok: true });
    expect(await mailsTo(u.email)).toHaveLength(3);
    const ip = randomIp();
    for (let i = 0; i < 10; i++) expect((await forgot(uniqueEmail('flood'), ip)).status).toBe(200);
    const limited = await forgot(u.email, ip);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'rate-limited' });
    clock.advance(61 * 60_000);
    expect((await forgot(u.email, ip)).status).toBe(200);
    expect(await mailsTo(u.email)).toHaveLength(4);
  });
});

describe('change password', () => {
  const change = (token: string | undefined, body: unknown) => s.call('POST', '/v1/user/password', { token, body });
  const body = (currentPassword: string, newPassword: string, confirmPassword = newPassword) => ({ currentPassword, newPassword, confirmPassword });

  it('answers the spec messages in order', async () => {
    const u = await createUser(s);
    const expectMessage = async (b: unknown, message: string) => {
      const res = await change(u.token, b);
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(message);
    };
    await expectMessage(body('', 'new-pass-1'), 'All fields are required.');
    await expectMessage(body(u.password, '  ', '  '), 'All fields are required.');
    await expectMessage(body(u.password, 'new-pass-1', ''), 'All fields are required.');
    await expectMessage(body(u.password, 'new-pass-1', 'new-pass-2'), 'New password and confirm password should be same.');
    await expectMessage(body(u.password, ` ${u.password} `), 'New password should not be same.');
    await expectMessage(body('wrong-current', 'new-pass-1'), 'There was an error in updating your password.');
    expect((await change(u.token, body('wrong-current', 'new-pass-1'))).body).toEqual(error('auth/password-change-failed'));
    expect((await change(u.token, body(u.password, '12345'))).body).toEqual(error('auth/weak-password'));
    expect((await login(u.email, u.password)).status).toBe(200); // nothing changed
  });

  it('changes the password, keeps this device signed in and revokes the other sessions', async () => {
    const u = await createUser(s);
    const laptop = sessionCookie((await login(u.email, u.password)).headers)!;
    const res = await change(u.token, body(u.password, 'changed-pass'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { uid: u.row.id, email: u.email }, accessToken: expect.any(String), expiresIn: 900 });
    const fresh = sessionCookie(res.headers)!;
    expect(res.headers.getSetCookie().join()).toMatch(/hd_session=.*; Path=\/v1\/auth; HttpOnly; Secure; SameSite=Lax/);
    expect((await refresh(fresh)).status).toBe(200);
    expect((await refresh(laptop)).status).toBe(401);
    expect((await refresh(u.cookie)).status).toBe(401);
    expect((await login(u.email, u.password)).status).toBe(401);
    expect((await login(u.email, 'changed-pass')).status).toBe(200);
  });

  it('requires a token and bounded, well-typed fields', async () => {
    expect((await change(undefined, body('a-pass-1', 'b-pass-2'))).status).toBe(401);
    const u = await createUser(s);
    for (const b of [{ currentPassword: 'x' }, body('x'.repeat(10_000), 'new-pass-1'), { ...body('a', 'b'), newPassword: 5 }]) {
      expect((await change(u.token, b)).status).toBe(400);
    }
    expect((await s.call('POST', '/v1/user/password', { token: u.token, raw: 'nope' })).status).toBe(400);
  });

  it('limits wrong current passwords per user', async () => {
    const u = await createUser(s);
    for (let i = 0; i < 10; i++) expect((await change(u.token, body(`wrong-${i}`, 'new-pass-1'))).status).toBe(400);
    const limited = await change(u.token, body(u.password, 'new-pass-1'));
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate-limited');
    clock.advance(16 * 60_000);
    const token = (await refresh(u.cookie)).body.accessToken; // the id token expired meanwhile
    expect((await change(token, body(u.password, 'new-pass-1'))).status).toBe(200);
  });
});
