import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { sql } from 'drizzle-orm';
import { manualClock } from '../src/lib/clock';
import { runAdmin } from '../src/cli/admin';
import { totpCode } from '../src/modules/identity/totp';
import { startTestServer, type TestServer } from './harness';
import { createUser, fromIp, randomIp, sessionCookie, withCookie } from './identity-helpers';
import { enrolTotp, firstAdminSignIn, loginWithCode } from './admin-helpers';

/**
 * Two-factor sign-in (issue 23.2) through real HTTP: enrol TOTP, log in with a code, recovery codes once, the
 * challenge's limits, the console closed to an admin without a second factor, the first admin's forced password
 * change and enrolment, and admin sign-ins in the audit log. A manual clock moves between TOTP steps.
 */
const STEP = 30_000;

describe('two-factor sign-in', () => {
  const clock = manualClock(new Date('2030-03-04T10:00:05Z'));
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ clock, env: { TRUST_PROXY: 'true' } });
  }, 180_000);
  afterAll(async () => s?.close());

  const code = (secret: string) => totpCode(secret, clock.now());
  const login = (email: string, password: string, ip = randomIp(), ua = 'vitest') =>
    s.call('POST', '/v1/auth/login', { body: { email, password }, headers: { ...fromIp(ip), 'user-agent': ua } });
  const mfa = (challenge: string, c: string, ip = randomIp(), ua = 'vitest') =>
    s.call('POST', '/v1/auth/mfa', { body: { challenge, code: c }, headers: { ...fromIp(ip), 'user-agent': ua } });

  it('enrols from the profile: a QR code and a secret once, confirmed by a code; ten recovery codes stored hashed', async () => {
    const u = await createUser(s);
    expect((await s.call('GET', '/v1/user/totp', { token: u.token })).body).toEqual({ enabled: false, recoveryCodesLeft: 0, required: false, passwordMustChange: false });
    const setup = await s.call('POST', '/v1/user/totp/setup', { token: u.token });
    expect(setup.status).toBe(200);
    expect(setup.headers.get('cache-control')).toBe('no-store');
    const { secret, otpauthUrl, qrSvg } = setup.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUrl).toBe(`otpauth://totp/Hyperdesk:${encodeURIComponent(u.email)}?issuer=Hyperdesk&secret=${secret}&algorithm=SHA1&digits=6&period=30`);
    expect(qrSvg).toMatch(/^<svg[^>]*>.*<path/s);
    // Not on until confirmed: a login still answers a session.
    expect((await login(u.email, u.password)).body.accessToken).toEqual(expect.any(String));

    const wrong = await s.call('POST', '/v1/user/totp/confirm', { token: u.token, body: { code: String((Number(code(secret)) + 1) % 1e6).padStart(6, '0') } });
    expect(wrong.body).toMatchObject({ statusCode: 400, code: 'totp/code-failed' });
    const ok = await s.call('POST', '/v1/user/totp/confirm', { token: u.token, body: { code: code(secret) } });
    expect(ok.status).toBe(200);
    expect(ok.body.recoveryCodes).toHaveLength(10);
    expect(new Set(ok.body.recoveryCodes).size).toBe(10);
    for (const c of ok.body.recoveryCodes) expect(c).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    expect(decodeJwt(ok.body.session.accessToken)).toMatchObject({ amr: ['pwd', 'otp'], mfa: true });
    // The enrolling session is replaced (other sessions end); the new cookie refreshes with the factor kept.
    const cookie = sessionCookie(ok.headers)!;
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(u.cookie) })).status).toBe(401);
    const refreshed = await s.call('POST', '/v1/auth/refresh', { headers: withCookie(cookie) });
    expect(decodeJwt(refreshed.body.accessToken)).toMatchObject({ amr: ['pwd', 'otp'], mfa: true });
    // A second setup is refused while it is on.
    expect((await s.call('POST', '/v1/user/totp/setup', { token: u.token })).body).toMatchObject({ statusCode: 409, code: 'totp/already-enabled' });
    expect((await s.call('GET', '/v1/user/totp', { token: u.token })).body).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });

    // At rest: the secret only encrypted, the recovery codes only as hashes.
    const stored = (await s.database.db.execute(sql`select secret_enc from user_totp where user_id = ${u.row.id}`)).rows[0] as { secret_enc: string };
    expect(stored.secret_enc).toMatch(/^v1\./);
    expect(stored.secret_enc).not.toContain(secret);
    const hashes = (await s.database.db.execute(sql`select code_hash from recovery_codes where user_id = ${u.row.id}`)).rows as { code_hash: string }[];
    expect(hashes).toHaveLength(10);
    const plain = ok.body.recoveryCodes.map((c: string) => c.replace(/-/g, ''));
    for (const h of hashes) expect(plain).not.toContain(h.code_hash);
    expect(hashes.every((h) => /^[0-9a-f]{64}$/.test(h.code_hash))).toBe(true);
  });

  it('logs in with a code: the password answers a challenge, the code a session; a code never works twice', async () => {
    const u = await createUser(s);
    const { secret } = await enrolTotp(s.call, u.token, clock.now());
    clock.advance(STEP);

    const first = await login(u.email, u.password);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ mfaRequired: true, challenge: expect.any(String), expiresIn: 300 });
    expect(sessionCookie(first.headers)).toBeUndefined(); // no session before the code
    const wrong = await mfa(first.body.challenge, '000000' === code(secret) ? '111111' : '000000');
    expect(wrong.body).toMatchObject({ statusCode: 401, code: 'auth/mfa-failed' });
    const now = code(secret);
    const done = await mfa(first.body.challenge, now);
    expect(done.status).toBe(200);
    expect(decodeJwt(done.body.accessToken)).toMatchObject({ sub: u.row.id, amr: ['pwd', 'otp'], mfa: true });
    expect(sessionCookie(done.headers)).toMatch(/^[0-9a-f-]{36}\./);
    // The challenge is single use, and the same code on a new challenge is a replay.
    expect((await mfa(first.body.challenge, now)).body).toMatchObject({ statusCode: 401, code: 'auth/mfa-expired' });
    const again = await login(u.email, u.password);
    expect((await mfa(again.body.challenge, now)).body).toMatchObject({ statusCode: 401, code: 'auth/mfa-failed' });
    // The next step's code works; the previous step's, though within the window, is older than the last one used.
    clock.advance(STEP);
    expect((await mfa(again.body.challenge, code(secret))).status).toBe(200);
    const third = await login(u.email, u.password);
    expect((await mfa(third.body.challenge, totpCode(secret, new Date(clock.now().getTime() - STEP)))).body.code).toBe('auth/mfa-failed');
  });

  it('a recovery code signs in once', async () => {
    const u = await createUser(s);
    const { recoveryCodes } = await enrolTotp(s.call, u.token, clock.now());
    const c = recoveryCodes[3]!;
    const first = await login(u.email, u.password);
    const done = await mfa(first.body.challenge, ` ${c.toUpperCase().replace(/-/g, ' ')} `); // typed loosely
    expect(done.status).toBe(200);
    expect(decodeJwt(done.body.accessToken)).toMatchObject({ mfa: true });
    const second = await login(u.email, u.password);
    expect((await mfa(second.body.challenge, c)).body).toMatchObject({ statusCode: 401, code: 'auth/mfa-failed' });
    expect((await mfa(second.body.challenge, recoveryCodes[4]!)).status).toBe(200);
    expect((await s.call('GET', '/v1/user/totp', { token: done.body.accessToken })).body.recoveryCodesLeft).toBe(8);
  });

  it('a challenge takes five wrong codes, expires after five minutes, and the account takes ten wrong codes', async () => {
    const u = await createUser(s);
    const { secret } = await enrolTotp(s.call, u.token, clock.now());
    clock.advance(STEP);
    const bad = () => (code(secret) === '123456' ? '654321' : '123456');
    const first = await login(u.email, u.password);
    for (let i = 0; i < 5; i++) expect((await mfa(first.body.challenge, bad())).body.code).toBe('auth/mfa-failed');
    expect((await mfa(first.body.challenge, code(secret))).body.code).toBe('auth/mfa-expired');

    const late = await login(u.email, u.password);
    clock.advance(5 * 60_000 + 1000);
    expect((await mfa(late.body.challenge, code(secret))).body.code).toBe('auth/mfa-expired');

    // 5 wrong so far in this quarter hour (the expired challenge took none); 5 more reach the account's limit.
    const next = await login(u.email, u.password);
    for (let i = 0; i < 5; i++) expect((await mfa(next.body.challenge, bad())).body.code).toBe('auth/mfa-failed');
    const blocked = await login(u.email, u.password);
    expect((await mfa(blocked.body.challenge, code(secret))).body).toMatchObject({ statusCode: 429, code: 'rate-limited' });
    clock.advance(15 * 60_000);
    expect((await mfa(blocked.body.challenge, code(secret))).body.code).toBe('auth/mfa-expired'); // that one expired meanwhile
    const fresh = await login(u.email, u.password);
    expect((await mfa(fresh.body.challenge, code(secret))).status).toBe(200);
  });

  it('turns off with the password and a code; then a login answers a session again', async () => {
    const u = await createUser(s);
    const { secret, token } = await enrolTotp(s.call, u.token, clock.now());
    clock.advance(STEP);
    const off = (body: unknown) => s.call('POST', '/v1/user/totp/disable', { token, body });
    expect((await off({ password: 'not-it', code: code(secret) })).body.code).toBe('totp/password-failed');
    expect((await off({ password: u.password, code: '12345' })).body.code).toBe('totp/code-failed');
    expect((await off({ password: u.password, code: code(secret) })).status).toBe(200);
    expect((await s.call('GET', '/v1/user/totp', { token })).body).toMatchObject({ enabled: false, recoveryCodesLeft: 0 });
    expect((await login(u.email, u.password)).body.accessToken).toEqual(expect.any(String));
    expect((await off({ password: u.password, code: code(secret) })).body.code).toBe('totp/not-enabled');
  });

  it('an admin without a second factor cannot open the console; with one, only a sign-in made with it can', async () => {
    const plain = await createUser(s, { admin: true, secondFactor: false });
    const res = await s.call('GET', '/v1/admin/users', { token: plain.token });
    expect(res.body).toMatchObject({ statusCode: 403, code: 'admin/mfa-enrol-required' });
    expect((await s.call('GET', '/v1/user/totp', { token: plain.token })).body).toMatchObject({ enabled: false, required: true });
    // Enrolled: the token signed before enrolment (password only) is still refused; the new one opens it.
    const { token, secret } = await enrolTotp(s.call, plain.token, clock.now());
    expect((await s.call('GET', '/v1/admin/users', { token: plain.token })).body.code).toBe('admin/mfa-required');
    expect((await s.call('GET', '/v1/admin/users', { token })).status).toBe(200);
    clock.advance(STEP);
    const signedIn = await loginWithCode(s.call, plain.email, plain.password, code(secret));
    expect((await s.call('GET', '/v1/admin/audit', { token: signedIn.token })).status).toBe(200);
    // Turning it off closes the console again, whatever the token says.
    clock.advance(STEP);
    expect((await s.call('POST', '/v1/user/totp/disable', { token, body: { password: plain.password, code: code(secret) } })).status).toBe(200);
    expect((await s.call('GET', '/v1/admin/users', { token })).body.code).toBe('admin/mfa-enrol-required');
  });

  it('the first admin (create-admin) changes the generated password and enrols before the console opens', async () => {
    const lines = await runAdmin(['create-admin', 'first-ops@example.com', 'First Ops'], s.database, { now: clock.now(), actor: { kind: 'cli', osUser: 'root' } });
    const generated = /^Password: (\S+)$/m.exec(lines.join('\n'))![1]!;
    const signed = await login('first-ops@example.com', generated);
    expect(signed.status).toBe(200);
    const token = signed.body.accessToken as string;
    expect((await s.call('GET', '/v1/admin/users', { token })).body).toMatchObject({ statusCode: 403, code: 'admin/password-change-required' });
    expect((await s.call('GET', '/v1/user/totp', { token })).body).toMatchObject({ passwordMustChange: true, required: true, enabled: false });
    // Enrolling first does not skip the password change.
    const early = await enrolTotp(s.call, token, clock.now());
    expect((await s.call('GET', '/v1/admin/users', { token: early.token })).body.code).toBe('admin/password-change-required');
    const changed = await s.call('POST', '/v1/user/password', { token: early.token, body: { currentPassword: generated, newPassword: 'new-pass-1', confirmPassword: 'new-pass-1' } });
    expect(changed.status).toBe(200);
    expect((await s.call('GET', '/v1/admin/users', { token: changed.body.accessToken })).status).toBe(200);

    // The helper the other admin tests use walks the same path from the start.
    await runAdmin(['create-admin', 'second-ops@example.com', 'Second Ops'], s.database, { now: clock.now() });
    const fresh = await s.database.db.execute(sql`select password_must_change from users where email = 'second-ops@example.com'`);
    expect(fresh.rows[0]).toEqual({ password_must_change: true });
  });

  it('audits admin sign-ins, failed and successful, with who, when, the address and the browser', async () => {
    const op = await createUser(s, { admin: true });
    clock.advance(STEP);
    const ip = randomIp();
    expect((await login(op.email, 'wrong-password', ip, 'Firefox/140')).status).toBe(401);
    const first = await login(op.email, op.password, ip, 'Firefox/140');
    expect((await mfa(first.body.challenge, '99999x', ip, 'Firefox/140')).status).toBe(401);
    const ok = await mfa(first.body.challenge, code(op.totpSecret!), ip, 'Firefox/140');
    expect(ok.status).toBe(200);
    // A plain user's sign-ins are not in the operator audit log.
    const user = await createUser(s);
    await login(user.email, 'wrong-password', ip);

    const audit = await s.call('GET', `/v1/admin/audit?action=auth.sign-in&limit=100`, { token: ok.body.accessToken });
    expect(audit.status).toBe(200);
    const mine = audit.body.items.filter((e: { targetId: string }) => e.targetId === op.row.id);
    expect(mine.map((e: { action: string }) => e.action)).toEqual(['auth.sign-in', 'auth.sign-in.failed', 'auth.sign-in.failed']);
    expect(mine[0]).toMatchObject({ at: clock.now().toISOString(), actor: { kind: 'console', email: op.email }, after: { ip, userAgent: 'Firefox/140', amr: ['pwd', 'otp'], factor: 'totp' } });
    expect(mine[1].after).toMatchObject({ ip, userAgent: 'Firefox/140', method: 'pwd', reason: 'wrong code' });
    expect(mine[2].after).toMatchObject({ ip, userAgent: 'Firefox/140', method: 'pwd', reason: 'wrong password' });
    expect(audit.body.items.some((e: { targetId: string }) => e.targetId === user.row.id)).toBe(false);
  });

  it("audits every user's two-factor changes with who, when and where: on, a recovery code spent, off", async () => {
    const op = await createUser(s, { admin: true });
    const u = await createUser(s); // not an operator: their changes are audited too
    const [ipA, ipB, ipC] = [randomIp(), randomIp(), randomIp()];
    const from = (ip: string, ua: string) => ({ ...fromIp(ip), 'user-agent': ua });
    const setup = await s.call('POST', '/v1/user/totp/setup', { token: u.token, headers: from(ipA, 'Firefox/140') });
    const wrongConfirm = await s.call('POST', '/v1/user/totp/confirm', { token: u.token, body: { code: code(setup.body.secret) === '123456' ? '654321' : '123456' }, headers: from(ipA, 'Firefox/140') });
    expect(wrongConfirm.status).toBe(400);
    const enabledAt = clock.now();
    const on = await s.call('POST', '/v1/user/totp/confirm', { token: u.token, body: { code: code(setup.body.secret) }, headers: from(ipA, 'Firefox/140') });
    expect(on.status).toBe(200);
    const { recoveryCodes } = on.body as { recoveryCodes: string[] };
    const token = on.body.session.accessToken as string;

    // A sign-in with the app's code is no recovery-code use; one with a recovery code is, from where it came.
    clock.advance(STEP);
    const withApp = await login(u.email, u.password, ipB, 'Safari/18');
    expect((await mfa(withApp.body.challenge, code(setup.body.secret), ipB, 'Safari/18')).status).toBe(200);
    clock.advance(STEP);
    const usedAt = clock.now();
    const withCode = await login(u.email, u.password, ipB, 'Safari/18');
    expect((await mfa(withCode.body.challenge, recoveryCodes[0]!, ipB, 'Safari/18')).status).toBe(200);

    // Turning it off: a wrong code writes nothing; a recovery code writes its use and the disable.
    clock.advance(STEP);
    const offAt = clock.now();
    const off = (c: string) => s.call('POST', '/v1/user/totp/disable', { token, body: { password: u.password, code: c }, headers: from(ipC, 'Edge/130') });
    expect((await off('000000' === code(setup.body.secret) ? '111111' : '000000')).status).toBe(400);
    expect((await off(recoveryCodes[1]!)).status).toBe(200);

    const audit = async (qs: string) => {
      const res = await s.call('GET', `/v1/admin/audit?limit=100&${qs}`, { token: op.token });
      expect(res.status).toBe(200);
      return res.body.items as { at: string; actor: unknown; action: string; targetId: string; before: unknown; after: unknown }[];
    };
    const mine = await audit(`action=user.totp&target=${encodeURIComponent(u.email)}`);
    const actor = { kind: 'account', uid: u.row.id, email: u.email, osUser: null }; // their own account, not the console
    expect(mine.map(({ at, actor: a, action, targetId, before, after }) => ({ at, actor: a, action, targetId, before, after }))).toEqual([
      {
        at: offAt.toISOString(), actor, action: 'user.totp.disable', targetId: u.row.id,
        before: { email: u.email, totp: true, recoveryCodesLeft: 8 },
        after: { email: u.email, totp: false, recoveryCodesLeft: 0, factor: 'recovery', ip: ipC, userAgent: 'Edge/130' },
      },
      {
        at: offAt.toISOString(), actor, action: 'user.totp.recovery-code.use', targetId: u.row.id,
        before: { email: u.email, recoveryCodesLeft: 9 },
        after: { email: u.email, recoveryCodesLeft: 8, during: 'disable', ip: ipC, userAgent: 'Edge/130' },
      },
      {
        at: usedAt.toISOString(), actor, action: 'user.totp.recovery-code.use', targetId: u.row.id,
        before: { email: u.email, recoveryCodesLeft: 10 },
        after: { email: u.email, recoveryCodesLeft: 9, during: 'sign-in', method: 'pwd', ip: ipB, userAgent: 'Safari/18' },
      },
      {
        at: enabledAt.toISOString(), actor, action: 'user.totp.enable', targetId: u.row.id,
        before: { email: u.email, totp: false },
        after: { email: u.email, totp: true, recoveryCodesLeft: 10, sessionsEnded: 1, ip: ipA, userAgent: 'Firefox/140' },
      },
    ]);
    // The filters: by the user as actor (their sign-ins themselves are not operator actions), by action, by id.
    expect((await audit(`actor=${encodeURIComponent(u.email)}`)).map((e) => e.action)).toEqual(mine.map((e) => e.action));
    expect((await audit(`action=user.totp.recovery-code&target=${u.row.id}`)).map((e) => e.at)).toEqual([offAt.toISOString(), usedAt.toISOString()]);
    expect(await audit(`action=user.totp.reset&target=${u.row.id}`)).toEqual([]);
    // The CSV export has the same rows with the address and browser in `after`.
    const csv = await (await fetch(`${s.base}/v1/admin/audit.csv?action=user.totp&target=${encodeURIComponent(u.email)}`, { headers: { idtoken: op.token } })).text();
    const lines = csv.trim().split('\r\n').slice(1);
    expect(lines.map((l) => l.split(',').slice(2, 5).join(','))).toEqual(mine.map((e) => `account,${u.email},${e.action}`));
    expect(lines[0]).toContain(`""ip"":""${ipC}""`);
    expect(lines[3]).toContain('""userAgent"":""Firefox/140""');
  });

  it("an operator resets a user's second factor in the console (Users): removed, sessions ended, audited", async () => {
    const op = await createUser(s, { admin: true });
    const u = await createUser(s);
    const enrolled = await enrolTotp(s.call, u.token, clock.now());
    const post = (uid: string, token = op.token) => s.call('POST', `/v1/admin/users/${uid}/reset-2fa`, { token, body: {} });
    const listed = await s.call('GET', `/v1/admin/users?q=${encodeURIComponent(u.email)}`, { token: op.token });
    expect(listed.body.items).toMatchObject([{ uid: u.row.id, twoFactor: true, activeSessions: 1 }]);

    // Only an operator's console session; not one's own (that would close one's own console: Account Details).
    expect((await post(u.row.id, enrolled.token)).body).toMatchObject({ statusCode: 403, code: 'admin/forbidden' });
    expect((await post(op.row.id)).body).toMatchObject({ statusCode: 409, code: 'admin/self' });
    expect((await s.call('GET', '/v1/admin/users', { token: op.token })).status).toBe(200);

    clock.advance(STEP);
    const resetAt = clock.now();
    const done = await post(u.row.id);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ uid: u.row.id, twoFactor: false, activeSessions: 0 });
    expect((await s.call('POST', '/v1/auth/refresh', { headers: withCookie(enrolled.cookie) })).status).toBe(401);
    expect((await login(u.email, u.password)).body.accessToken).toEqual(expect.any(String)); // no code step any more
    expect((await s.call('GET', '/v1/user/totp', { token: enrolled.token })).body).toMatchObject({ enabled: false, recoveryCodesLeft: 0 });
    // An id token from before the reset still reads until it expires, but enrols nothing (a thief's token must not
    // put the thief's authenticator on the account); one from a sign-in after the reset does.
    const setup = (token: string) => s.call('POST', '/v1/user/totp/setup', { token, body: {} });
    expect((await setup(enrolled.token)).body).toMatchObject({ statusCode: 401, code: 'auth/session-expired' });
    expect((await s.call('POST', '/v1/user/totp/confirm', { token: enrolled.token, body: { code: '123456' } })).body).toMatchObject({ statusCode: 401, code: 'auth/session-expired' });
    // Nothing left to reset: refused, no second row.
    expect((await post(u.row.id)).body).toMatchObject({ statusCode: 409, code: 'admin/no-second-factor' });

    const res = await s.call('GET', `/v1/admin/audit?action=user.totp.reset&target=${u.row.id}`, { token: op.token });
    expect(res.body.items).toMatchObject([
      {
        at: resetAt.toISOString(),
        actor: { kind: 'console', uid: op.row.id, email: op.email, osUser: null },
        action: 'user.totp.reset',
        targetType: 'user',
        targetId: u.row.id,
        before: { email: u.email, totp: true, enrolmentPending: false, recoveryCodesLeft: 10 },
        after: { email: u.email, totp: false, recoveryCodesLeft: 0, sessionsEnded: 1 },
      },
    ]);
    expect(res.body.items).toHaveLength(1);
    expect((await s.call('GET', `/v1/admin/audit?actor=${encodeURIComponent(op.email)}&action=user.totp.reset`, { token: op.token })).body.items).toHaveLength(1);
    clock.advance(1000);
    const fresh = (await login(u.email, u.password)).body.accessToken as string;
    expect((await setup(fresh)).status).toBe(200);
  });

  it('the first-admin helper gives a console-ready token', async () => {
    const lines = await runAdmin(['create-admin', 'helper-ops@example.com', 'Helper Ops'], s.database, { now: clock.now() });
    const generated = /^Password: (\S+)$/m.exec(lines.join('\n'))![1]!;
    const op = await firstAdminSignIn(s.call, 'helper-ops@example.com', generated, { now: clock.now() });
    expect((await s.call('GET', '/v1/admin/users', { token: op.token })).status).toBe(200);
  });
});
