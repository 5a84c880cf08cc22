import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair, decodeJwt } from 'jose';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { inArray } from 'drizzle-orm';
import { manualClock } from '../src/lib/clock';
import { captchaUsed, sessions } from '../src/db/schema/index';
import { startTestServer, type TestServer } from './harness';
import { createUser, fromIp, randomIp, sessionCookie, signUp, solveCaptcha, uniqueEmail, withCookie } from './identity-helpers';

const clock = manualClock(new Date('2030-01-01T10:00:00Z'));
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ clock, env: { TRUST_PROXY: 'true' } });
});
afterAll(async () => s.close());

const error = (code: keyof typeof AUTH_MESSAGES) => expect.objectContaining({ code, message: AUTH_MESSAGES[code] });

describe('sign-up', () => {
  const post = (body: unknown, ip = randomIp()) => s.call('POST', '/v1/auth/signup', { body, headers: fromIp(ip) });
  const valid = (o: Record<string, unknown> = {}) => ({
    name: 'Grace Hopper',
    email: uniqueEmail('grace'),
    password: 'cobol-1959',
    confirmPassword: 'cobol-1959',
    ...o,
  });

  it('creates the account, answers a Session and sets the refresh cookie', async () => {
    const email = uniqueEmail('Grace').toUpperCase();
    const res = await post({ ...valid({ email: `  ${email} `, name: '  Grace Hopper ' }), captcha: await solveCaptcha(s) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: { uid: expect.any(String), displayName: 'Grace Hopper', email: email.toLowerCase(), instructor: false, admin: false },
      accessToken: expect.any(String),
      expiresIn: 900,
    });
    const claims = decodeJwt(res.body.accessToken);
    expect(claims).toMatchObject({ sub: res.body.user.uid, email: email.toLowerCase(), name: 'Grace Hopper', instructor: false, admin: false });
    const cookieLine = res.headers.getSetCookie().find((l) => l.startsWith('hd_session='))!;
    expect(cookieLine).toMatch(/^hd_session=[0-9a-f-]{36}\.[\w-]{43}; Max-Age=2592000; Path=\/v1\/auth; HttpOnly; SameSite=Lax$/);
    // Its non-secret marker, for the page to know a session may exist (never httpOnly, readable on every path).
    const marker = res.headers.getSetCookie().find((l) => l.startsWith('hd_signed_in='))!;
    expect(marker).toMatch(/^hd_signed_in=1; Max-Age=2592000; Path=\/; SameSite=Lax$/);
    const me = await s.call('GET', '/v1/user/me', { token: res.body.accessToken });
    expect(me.body).toEqual(res.body.user);
  });

  it('checks the fields in the order the popup reports them', async () => {
    const captcha = 'not-checked-before-the-fields';
    for (const blank of ['name', 'email', 'password', 'confirmPassword']) {
      const res = await post({ ...valid({ [blank]: '   ' }), captcha });
      expect(res.status, blank).toBe(400);
      expect(res.body).toEqual(error('auth/fields-required'));
    }
    expect((await post({ ...valid({ confirmPassword: 'cobol-1960' }), captcha })).body).toEqual(error('auth/password-mismatch'));
    // The captcha is checked before the e-mail shape and the password length.
    expect((await post(valid({ email: 'nope', password: '1', confirmPassword: '1' }))).body).toEqual(error('auth/captcha-required'));
    expect((await post({ ...valid(), captcha: 'garbage' })).body).toEqual(error('auth/captcha-required'));
    expect((await post({ ...valid({ email: 'not-an-email', password: '1' , confirmPassword: '1' }), captcha: await solveCaptcha(s) })).body).toEqual(
      error('auth/invalid-email'),
    );
    const weak = await post({ ...valid({ password: '12345', confirmPassword: '12345' }), captcha: await solveCaptcha(s) });
    expect(weak.status).toBe(400);
    expect(weak.body).toEqual(error('auth/weak-password'));
    const six = await post({ ...valid({ password: '123456', confirmPassword: '123456' }), captcha: await solveCaptcha(s) });
    expect(six.status).toBe(201);
  });

  it('refuses an e-mail already in use, whatever its case', async () => {
    const first = await signUp(s, { email: uniqueEmail('dup') });
    const res = await post({ ...valid({ email: first.email.toUpperCase() }), captcha: await solveCaptcha(s) });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(error('auth/email-already-in-use'));
  });

  it('accepts each captcha solution once', async () => {
    const captcha = await solveCaptcha(s);
    expect((await post({ ...valid(), captcha })).status).toBe(201);
    const again = await post({ ...valid(), captcha });
    expect(again.status).toBe(400);
    expect(again.body).toEqual(error('auth/captcha-required'));
  });

  it('refuses a captcha solved after its challenge expired (10 minutes)', async () => {
    const captcha = await solveCaptcha(s);
    clock.advance(11 * 60_000);
    expect((await post({ ...valid(), captcha })).body).toEqual(error('auth/captcha-required'));
  });

  it('refuses a forged solution (wrong number, or a challenge signed with another key)', async () => {
    const solved = JSON.parse(Buffer.from(await solveCaptcha(s), 'base64').toString());
    const wrongNumber = Buffer.from(JSON.stringify({ ...solved, number: solved.number + 1 })).toString('base64');
    expect((await post({ ...valid(), captcha: wrongNumber })).body).toEqual(error('auth/captcha-required'));
    const resigned = Buffer.from(JSON.stringify({ ...solved, signature: 'a'.repeat(64) })).toString('base64');
    expect((await post({ ...valid(), captcha: resigned })).body).toEqual(error('auth/captcha-required'));
    // The untouched solution still works: the forgeries did not use it up.
    expect((await post({ ...valid(), captcha: Buffer.from(JSON.stringify(solved)).toString('base64') })).status).toBe(201);
  });

  it('answers bad input with 400 and the error body, never 500', async () => {
    const huge = 'x'.repeat(10_000);
    const cases: { raw?: string; body?: unknown }[] = [
      { raw: '{"name": "a",' },
      { raw: '' },
      { body: [] },
      { body: { ...valid(), name: huge } },
      { body: { ...valid(), email: `${huge}@example.com` } },
      { body: { ...valid(), password: huge, confirmPassword: huge } },
      { body: { ...valid(), captcha: huge } },
      { body: { ...valid(), email: 42 } },
      { body: { ...valid(), password: { $ne: '' } } },
      { body: { email: 'a@example.com' } },
    ];
    for (const c of cases) {
      const res = await s.call('POST', '/v1/auth/signup', { ...c, headers: fromIp(randomIp()) });
      expect(res.status, JSON.stringify(c).slice(0, 80)).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.any(String), reqId: expect.any(String) });
    }
  });

  it('limits sign-ups per client address (429 with the error body)', async () => {
    const ip = randomIp();
    for (let i = 0; i < 50; i++) expect((await post(valid({ name: '' }), ip)).status).toBe(400);
    const limited = await post(valid(), ip);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'rate-limited', reqId: expect.any(String) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post(valid({ name: '' }))).status).toBe(400); // another address is unaffected
    clock.advance(61 * 60_000);
    expect((await post(valid({ name: '' }), ip)).status).toBe(400);
  });
});

describe('login, refresh and logout', () => {
  const login = (body: unknown, ip = randomIp()) => s.call('POST', '/v1/auth/login', { body, headers: fromIp(ip) });
  const refresh = (cookie?: string) => s.call('POST', '/v1/auth/refresh', { headers: cookie === undefined ? {} : withCookie(cookie) });

  it('logs in case-insensitively and answers a Session with a cookie', async () => {
    const u = await createUser(s, { name: 'Alan Turing' });
    const res = await login({ email: ` ${u.email.toUpperCase()} `, password: u.password });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ uid: u.row.id, displayName: 'Alan Turing', email: u.email });
    expect(sessionCookie(res.headers)).toMatch(/^[0-9a-f-]{36}\./);
  });

  it('answers the same for an unknown e-mail and a wrong password', async () => {
    const u = await createUser(s);
    const wrong = await login({ email: u.email, password: 'wrong-password' });
    const unknown = await login({ email: uniqueEmail('ghost'), password: 'wrong-password' });
    const empty = await login({ email: '', password: '' });
    for (const res of [wrong, unknown, empty]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(error('auth/login-failed'));
      expect(sessionCookie(res.headers)).toBeUndefined();
    }
  });

  it('refreshes with the cookie: new id token, rotated cookie, claims re-read from the database', async () => {
    const u = await createUser(s);
    expect(decodeJwt(u.token).instructor).toBe(false);
    await s.database.exec(`update users set instructor = true where id = '${u.row.id}'`);
    const res = await refresh(u.cookie);
    expect(res.status).toBe(200);
    expect(res.body.user.instructor).toBe(true);
    expect(decodeJwt(res.body.accessToken)).toMatchObject({ sub: u.row.id, instructor: true, admin: false });
    const rotated = sessionCookie(res.headers)!;
    expect(rotated).not.toBe(u.cookie);
    expect(rotated.split('.')[0]).toBe(u.cookie.split('.')[0]);
    // The previous cookie still works for a minute (a parallel tab), answering the same new cookie, not another ...
    const parallel = await refresh(u.cookie);
    expect(parallel.status).toBe(200);
    expect(sessionCookie(parallel.headers)).toBe(rotated);
    // ... and after that it is a replayed copy: the whole session is revoked.
    clock.advance(2 * 60_000);
    const replay = await refresh(u.cookie);
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual(error('auth/session-expired'));
    expect(sessionCookie(replay.headers)).toBe('');
    expect((await refresh(rotated)).status).toBe(401);
  });

  it('a refresh whose answer was lost gets the same new cookie again, which then lasts (a page left mid-refresh)', async () => {
    const u = await createUser(s);
    const lost = sessionCookie((await refresh(u.cookie)).headers)!; // the browser navigated away: never stored
    clock.advance(20_000);
    const next = await refresh(u.cookie); // the next page still sends the old cookie
    expect(next.status).toBe(200);
    expect(sessionCookie(next.headers)).toBe(lost);
    clock.advance(5 * 60_000);
    const later = await refresh(lost);
    expect(later.status).toBe(200);
    expect(sessionCookie(later.headers)).not.toBe(lost);
    // The database alone cannot open the sealed secret: it is not stored in the clear, and only its hash is kept.
    const [row] = await s.database.db.select().from(sessions).where(inArray(sessions.userId, [u.row.id]));
    const secret = sessionCookie(later.headers)!.split('.')[1]!;
    expect(row!.nextSecretSealed).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('two tabs refreshing one cookie at once get one new cookie', async () => {
    const u = await createUser(s);
    const answers = await Promise.all([refresh(u.cookie), refresh(u.cookie), refresh(u.cookie)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const cookies = new Set(answers.map((a) => sessionCookie(a.headers)));
    expect(cookies.size).toBe(1);
    const [cookie] = [...cookies];
    expect(cookie).toMatch(/\./);
    expect((await refresh(cookie)).status).toBe(200);
  });

  it('refuses a missing, malformed, unknown or expired cookie', async () => {
    expect((await refresh()).status).toBe(401);
    expect((await refresh('garbage')).status).toBe(401);
    const u = await createUser(s);
    const [id] = u.cookie.split('.');
    expect((await refresh(`${id}.${'A'.repeat(43)}`)).status).toBe(401);
    expect((await refresh(`${u.cookie}x`)).status).toBe(401);
    expect((await refresh(u.cookie)).status).toBe(200); // the wrong secrets above did not revoke it
    const v = await createUser(s);
    clock.advance(31 * 24 * 60 * 60_000);
    expect((await refresh(v.cookie)).status).toBe(401);
  });

  it('logout revokes the session server-side and clears the cookie', async () => {
    const u = await createUser(s);
    const out = await s.call('POST', '/v1/auth/logout', { headers: withCookie(u.cookie) });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().find((l) => l.startsWith('hd_session='))).toMatch(/^hd_session=; Max-Age=0; Path=\/v1\/auth; .*HttpOnly; SameSite=Lax/);
    expect(out.headers.getSetCookie().find((l) => l.startsWith('hd_signed_in='))).toMatch(/^hd_signed_in=; Max-Age=0; Path=\/; /);
    const refused = await refresh(u.cookie);
    expect(refused.status).toBe(401);
    // A refused refresh clears the marker too: the page stops asking.
    expect(refused.headers.getSetCookie().find((l) => l.startsWith('hd_signed_in='))).toMatch(/^hd_signed_in=; Max-Age=0; Path=\/; /);
    expect((await s.call('POST', '/v1/auth/logout')).status).toBe(204); // without a cookie: nothing to do
  });

  it('limits failed logins per address and e-mail, so others can still log in', async () => {
    const u = await createUser(s);
    const attacker = randomIp();
    for (let i = 0; i < 10; i++) expect((await login({ email: u.email, password: `guess-${i}` }, attacker)).status).toBe(401);
    const blocked = await login({ email: u.email, password: u.password }, attacker);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ statusCode: 429, code: 'rate-limited' });
    expect((await login({ email: u.email, password: u.password }, randomIp())).status).toBe(200);
    clock.advance(16 * 60_000);
    expect((await login({ email: u.email, password: u.password }, attacker)).status).toBe(200);
  });

  it('limits login attempts per address', async () => {
    const ip = randomIp();
    const spray = Array.from({ length: 60 }, () => login({ email: uniqueEmail('spray'), password: 'x' }, ip));
    expect((await Promise.all(spray)).map((r) => r.status)).toEqual(Array(60).fill(401));
    expect((await login({ email: uniqueEmail('spray'), password: 'x' }, ip)).status).toBe(429);
    clock.advance(61_000);
    expect((await login({ email: uniqueEmail('spray'), password: 'x' }, ip)).status).toBe(401);
  });

  it('answers bad login input with 400', async () => {
    for (const body of [{ email: 'a@b.co' }, { email: 1, password: 'x' }, { email: 'a@b.co', password: 'p'.repeat(10_000) }]) {
      expect((await login(body)).status).toBe(400);
    }
    expect((await s.call('POST', '/v1/auth/login', { raw: '{not json' })).status).toBe(400);
  });
});

describe('id tokens and the user calls', () => {
  it('refuses a missing, expired, foreign or tampered token', async () => {
    const u = await createUser(s);
    const me = (token?: string) => s.call('GET', '/v1/user/me', { token });
    expect((await me(u.token)).status).toBe(200);
    const none = await me();
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ statusCode: 401, code: 'auth/no-token' });
    expect((await me('not.a.token')).body).toMatchObject({ statusCode: 401, code: 'auth/invalid-token' });

    const [h, , sig] = u.token.split('.');
    const claims = { ...decodeJwt(u.token), admin: true };
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
    expect((await me(tampered)).status).toBe(401);

    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await new SignJWT({ email: u.email, name: 'x', instructor: true, admin: true })
      .setProtectedHeader({ alg: 'ES256', kid: decodeJwtHeader(u.token).kid })
      .setSubject(u.row.id)
      .setIssuer('hyperdesk')
      .setAudience('hyperdesk')
      .setIssuedAt(Math.floor(clock.now().getTime() / 1000))
      .setExpirationTime(Math.floor(clock.now().getTime() / 1000) + 600)
      .sign(privateKey);
    expect((await me(foreign)).status).toBe(401);

    clock.advance(16 * 60_000);
    const expired = await me(u.token);
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('auth/invalid-token');
  });

  it('GET /v1/user/me answers the user from the database', async () => {
    const u = await createUser(s, { name: 'Katherine Johnson', admin: true });
    expect((await s.call('GET', '/v1/user/me', { token: u.token })).body).toEqual({
      uid: u.row.id,
      displayName: 'Katherine Johnson',
      email: u.email,
      instructor: false,
      admin: true,
    });
  });

  it('PATCH /v1/user/profile sets the display name', async () => {
    const u = await createUser(s);
    const res = await s.call('PATCH', '/v1/user/profile', { token: u.token, body: { displayName: '  Dorothy Vaughan ' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ uid: u.row.id, displayName: 'Dorothy Vaughan' });
    expect((await s.call('GET', '/v1/user/me', { token: u.token })).body.displayName).toBe('Dorothy Vaughan');
    for (const displayName of ['   ', 'n'.repeat(101), 5]) {
      expect((await s.call('PATCH', '/v1/user/profile', { token: u.token, body: { displayName } })).status).toBe(400);
    }
    expect((await s.call('PATCH', '/v1/user/profile', { body: { displayName: 'x' } })).status).toBe(401);
  });

  it('serves ALTCHA challenges that expire in about ten minutes', async () => {
    const res = await s.call('GET', '/v1/captcha/challenge');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ algorithm: 'SHA-256', challenge: expect.stringMatching(/^[0-9a-f]{64}$/), maxnumber: 50_000 });
    const expires = Number(new URLSearchParams(res.body.salt.split('?')[1]).get('expires'));
    expect(expires * 1000 - clock.now().getTime()).toBe(10 * 60_000);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('cleanup job', () => {
  it('deletes spent captcha signatures after their expiry and sessions a week after they ended', async () => {
    const { db } = s.app.ctx;
    await signUp(s, { ip: randomIp() });
    const live = await createUser(s);
    const ended = await createUser(s);
    await s.call('POST', '/v1/auth/logout', { headers: withCookie(ended.cookie) });
    expect((await db.select().from(captchaUsed)).length).toBeGreaterThan(0);
    clock.advance(8 * 24 * 60 * 60_000);
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(live.cookie) })).status).toBe(200); // slides its expiry
    await s.app.ctx.jobs.find((j) => j.name === 'identity-cleanup')!.runOnce();
    expect(await db.select().from(captchaUsed)).toEqual([]);
    const left = await db.select({ userId: sessions.userId }).from(sessions).where(inArray(sessions.userId, [live.row.id, ended.row.id]));
    expect(left).toEqual([{ userId: live.row.id }]);
  });
});

function decodeJwtHeader(token: string): { kid: string } {
  return JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString());
}
