import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startTestServer, type TestServer } from './harness';
import { createUser, uniqueEmail } from './identity-helpers';
import { CookieJar, hop, loginAtIdp, signingKey, startIdp, type SharedStore, type TestIdp } from './oidc-idp';
import { toPrincipal } from '../src/modules/identity/users';
import type { Principal } from '../src/lib/principal';

const PUBLIC_URL = 'http://127.0.0.1:5899';
const REDIRECT_URI = `${PUBLIC_URL}/v1/auth/sso/callback`;

/**
 * An operator who may open the console: when two-factor sign-in guards it (issue 23.2), with a confirmed
 * authenticator and an id token of a sign-in made with it.
 */
async function operator(s: TestServer) {
  const a = await createUser(s, { admin: true });
  const guarded = await s.database.db.execute(sql`select to_regclass('user_totp') is not null as t`);
  if ((guarded.rows[0] as { t: boolean }).t) {
    await s.database.db.execute(sql`insert into user_totp (user_id, secret_enc, confirmed_at) values (${a.row.id}, 'unused', now()) on conflict do nothing`);
  }
  const token = await s.app.ctx.tokens.sign({ ...toPrincipal(a.row), amr: ['pwd', 'otp'], mfa: true } as Principal);
  return { ...a, token };
}

/**
 * Single sign-on against real OpenID providers (oidc-provider on loopback ports), through real HTTP (issue 23.1):
 * the refusals — a wrong or replayed state, a state from another browser, a wrong nonce, an id token from another
 * issuer, an unverified e-mail, a domain outside the list — and the account matching.
 */
describe('sso: sign-in through an OpenID provider', () => {
  let s: TestServer;
  let admin: Awaited<ReturnType<typeof operator>>;
  let school: TestIdp; // the school's provider
  let other: TestIdp; // another provider with the same signing key
  let rogue: TestIdp; // publishes `other`'s token endpoint: its id tokens come from another issuer
  let schoolId: string;
  let rogueId: string;
  const logs: string[] = [];

  const addProvider = async (idp: TestIdp, name: string, domains = ['school.test']) => {
    const res = await s.call('POST', '/v1/admin/sso/providers', {
      token: admin.token,
      body: { name, issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, domains, enabled: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };

  /** Hyperdesk's start: the redirect to the provider, and the hd_sso cookie in the jar. */
  const start = async (jar: CookieJar, providerId: string) => {
    const r = await hop(jar, `${s.base}/v1/auth/sso/${providerId}/start`);
    expect(r.status).toBe(302);
    return r.location!;
  };
  /** The provider's redirect back, delivered to this server (PUBLIC_URL names where a browser would go). */
  const callback = async (jar: CookieJar, back: URL | string) => {
    const query = typeof back === 'string' ? back : back.search.slice(1);
    const r = await hop(jar, `${s.base}/v1/auth/sso/callback?${query}`);
    expect(r.status).toBe(302);
    return { location: new URL(r.location!), session: jar.get('hd_session') };
  };
  const errorOf = (location: URL) => location.searchParams.get('sso_error');
  const account = (idp: TestIdp, email: string, o: { emailVerified?: boolean; name?: string } = {}) => {
    const id = `acct-${Math.random().toString(36).slice(2)}`;
    idp.accounts.set(id, { email, emailVerified: o.emailVerified ?? true, name: o.name ?? 'Sam Student' });
    return id;
  };
  /** The whole sign-in as a browser makes it; answers where Hyperdesk sent the browser and its session cookie. */
  const signIn = async (providerId: string, idp: TestIdp, login: string, jar = new CookieJar()) => {
    const authUrl = await start(jar, providerId);
    return callback(jar, await loginAtIdp(jar, authUrl, login));
  };
  const refreshed = async (cookie: string) => {
    const res = await s.call('POST', '/v1/auth/refresh', { headers: { cookie: `hd_session=${cookie}` } });
    expect(res.status).toBe(200);
    return res.body as { user: { uid: string; email: string; displayName: string }; accessToken: string };
  };
  const refusedBecause = (pattern: RegExp) => logs.some((l) => l.includes('sso sign-in refused') && pattern.test(l));

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    s = await startTestServer({ env: { PUBLIC_URL }, logger: { level: 'warn', stream } });
    admin = await operator(s);
    const key = await signingKey();
    const store: SharedStore = new Map();
    school = await startIdp({ redirectUri: REDIRECT_URI });
    other = await startIdp({ redirectUri: REDIRECT_URI, key, store, clientId: 'shared-client', clientSecret: 'shared-secret-123' });
    rogue = await startIdp({ redirectUri: REDIRECT_URI, key, store, clientId: 'shared-client', clientSecret: 'shared-secret-123', tokenEndpointOf: () => `${other.issuer}/token` });
    schoolId = await addProvider(school, 'Test School');
    rogueId = await addProvider(rogue, 'Rogue School');
  }, 180_000);
  afterAll(async () => {
    await Promise.all([school?.close(), other?.close(), rogue?.close()]);
    await s?.close();
  });

  it('lists the enabled providers for the sign-in popups, never a secret', async () => {
    const res = await s.call('GET', '/v1/auth/sso/providers');
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual(expect.arrayContaining([{ id: schoolId, name: 'Test School' }]));
    expect(JSON.stringify(res.body)).not.toContain(school.clientSecret);
  });

  it('starts the authorization code flow with PKCE (S256), state and nonce, bound to the browser by an httpOnly cookie', async () => {
    const jar = new CookieJar();
    const res = await fetch(`${s.base}/v1/auth/sso/${schoolId}/start`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('hd_sso='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Path=\/v1\/auth\/sso/);
    expect(cookie).toMatch(/SameSite=Lax/i);
    jar.take(res.headers);
    const url = new URL(res.headers.get('location')!);
    expect(url.origin).toBe(school.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(url.searchParams.get('client_id')).toBe(school.clientId);
  });

  it('signs up a new user with a verified school e-mail, and logs the same account in the next time', async () => {
    const email = uniqueEmail('new').replace('@example.com', '@school.test');
    const login = account(school, email, { name: 'Nia New' });
    const first = await signIn(schoolId, school, login);
    expect(first.location.pathname).toBe('/dashboard');
    expect(first.session).toBeTruthy();
    const s1 = await refreshed(first.session!);
    expect(s1.user).toMatchObject({ email, displayName: 'Nia New', instructor: false, admin: false });
    const verified = await s.database.db.execute(sql`select email_verified_at is not null as v from users where email = ${email}`);
    expect((verified.rows[0] as { v: boolean }).v).toBe(true);

    const again = await signIn(schoolId, school, login);
    expect(again.location.pathname).toBe('/dashboard');
    expect((await refreshed(again.session!)).user.uid).toBe(s1.user.uid);
  });

  it('matches an existing account by its e-mail (case-insensitively) and keeps its password', async () => {
    const existing = await createUser(s, { email: uniqueEmail('has').replace('@example.com', '@school.test') });
    await s.database.db.execute(sql`update users set email_verified_at = now() where id = ${existing.row.id}`);
    const got = await signIn(schoolId, school, account(school, existing.email.toUpperCase()));
    expect((await refreshed(got.session!)).user.uid).toBe(existing.row.id);
    const login = await s.call('POST', '/v1/auth/login', { body: { email: existing.email, password: existing.password } });
    expect(login.status).toBe(200);
  });

  it("takes over an unproven account with the school's address: its sessions end and its password stops working", async () => {
    const squatter = await createUser(s, { email: uniqueEmail('squat').replace('@example.com', '@school.test') });
    const got = await signIn(schoolId, school, account(school, squatter.email));
    expect((await refreshed(got.session!)).user.uid).toBe(squatter.row.id);
    const old = await s.call('POST', '/v1/auth/refresh', { headers: { cookie: `hd_session=${squatter.cookie}` } });
    expect(old.status).toBe(401);
    const login = await s.call('POST', '/v1/auth/login', { body: { email: squatter.email, password: squatter.password } });
    expect(login.status).toBe(401);
  });

  it('refuses a state it never issued, and sets no session', async () => {
    const jar = new CookieJar();
    const authUrl = await start(jar, schoolId);
    const back = await loginAtIdp(jar, authUrl, account(school, 'wrong-state@school.test'));
    back.searchParams.set('state', 'x'.repeat(43));
    const got = await callback(jar, back);
    expect(errorOf(got.location)).toBe('sso/expired');
    expect(got.session).toBeUndefined();
  });

  it("refuses a code presented with another of the browser's sign-ins' state (its PKCE verifier does not match)", async () => {
    const jar = new CookieJar();
    const first = await start(jar, schoolId);
    const second = new URL(await start(jar, schoolId));
    const back = await loginAtIdp(jar, first, account(school, 'swapped@school.test'));
    back.searchParams.set('state', second.searchParams.get('state')!);
    const got = await callback(jar, back);
    expect(errorOf(got.location)).toBe('sso/failed');
    expect(got.session).toBeUndefined();
    expect(refusedBecause(/invalid_grant|PKCE|code_verifier/i)).toBe(true);
  });

  it('refuses a state replayed after its sign-in, and a state sent from another browser', async () => {
    const jar = new CookieJar();
    const authUrl = await start(jar, schoolId);
    const back = await loginAtIdp(jar, authUrl, account(school, 'replay@school.test'));
    const thief = new CookieJar();
    await start(thief, schoolId); // the thief has an hd_sso cookie of their own
    const stolen = await callback(thief, back);
    expect(errorOf(stolen.location)).toBe('sso/expired');
    expect(stolen.session).toBeUndefined();

    const ok = await callback(jar, back);
    expect(ok.location.pathname).toBe('/dashboard');
    const replayJar = new CookieJar();
    replayJar.set('hd_sso', jar.get('hd_sso')!);
    const replay = await callback(replayJar, back);
    expect(errorOf(replay.location)).toBe('sso/expired');
    expect(replay.session).toBeUndefined();
  });

  it('refuses an id token whose nonce is not the one this sign-in sent', async () => {
    const jar = new CookieJar();
    const authUrl = new URL(await start(jar, schoolId));
    // The provider signs the nonce it was sent; the server now expects another one (as for a token of another sign-in).
    await s.database.db.execute(sql`update sso_attempts set nonce = 'some-other-sign-in-nonce' where code_verifier is not null and used_at is null and nonce = ${authUrl.searchParams.get('nonce')}`);
    const got = await callback(jar, await loginAtIdp(jar, authUrl.href, account(school, 'nonce@school.test')));
    expect(errorOf(got.location)).toBe('sso/failed');
    expect(got.session).toBeUndefined();
    expect(refusedBecause(/claim nonce/)).toBe(true);
  });

  it('refuses an id token from another issuer, even signed with a key the provider publishes', async () => {
    const login = `acct-${Math.random().toString(36).slice(2)}`;
    rogue.accounts.set(login, { email: 'rogue@school.test', emailVerified: true, name: 'Rogue' });
    other.accounts.set(login, { email: 'rogue@school.test', emailVerified: true, name: 'Rogue' });
    const got = await signIn(rogueId, rogue, login);
    expect(errorOf(got.location)).toBe('sso/failed');
    expect(got.session).toBeUndefined();
    expect(refusedBecause(/claim iss/)).toBe(true);
    const users = await s.database.db.execute(sql`select 1 from users where email = 'rogue@school.test'`);
    expect(users.rows).toHaveLength(0);
  });

  it('refuses an e-mail the provider does not call verified', async () => {
    const got = await signIn(schoolId, school, account(school, 'unproven@school.test', { emailVerified: false }));
    expect(errorOf(got.location)).toBe('sso/email-unverified');
    expect(got.session).toBeUndefined();
  });

  it('refuses an e-mail outside the allowed domains (a subdomain is outside too)', async () => {
    for (const email of ['someone@elsewhere.test', 'someone@evil.school.test', 'someone@school.test.evil']) {
      const got = await signIn(schoolId, school, account(school, email));
      expect(errorOf(got.location), email).toBe('sso/domain-not-allowed');
      expect(got.session).toBeUndefined();
    }
    const users = await s.database.db.execute(sql`select 1 from users where email like 'someone@%'`);
    expect(users.rows).toHaveLength(0);
  });

  it('refuses a disabled account', async () => {
    const u = await createUser(s, { email: uniqueEmail('off').replace('@example.com', '@school.test') });
    await s.database.db.execute(sql`update users set disabled_at = now(), email_verified_at = now() where id = ${u.row.id}`);
    const got = await signIn(schoolId, school, account(school, u.email));
    expect(errorOf(got.location)).toBe('sso/account-disabled');
    expect(got.session).toBeUndefined();
  });

  it('refuses an expired sign-in', async () => {
    const jar = new CookieJar();
    const authUrl = await start(jar, schoolId);
    await s.database.db.execute(sql`update sso_attempts set expires_at = now() - interval '1 second' where used_at is null`);
    const got = await callback(jar, await loginAtIdp(jar, authUrl, account(school, 'late@school.test')));
    expect(errorOf(got.location)).toBe('sso/expired');
  });

  it('a disabled or unknown provider offers no button and starts nothing', async () => {
    const idp = await startIdp({ redirectUri: REDIRECT_URI });
    try {
      const id = await addProvider(idp, 'Paused School');
      const body = { name: 'Paused School', issuer: idp.issuer, clientId: idp.clientId, domains: ['school.test'], enabled: false };
      expect((await s.call('PUT', `/v1/admin/sso/providers/${id}`, { token: admin.token, body })).status).toBe(200);
      const list = await s.call('GET', '/v1/auth/sso/providers');
      expect(list.body.items.map((p: { id: string }) => p.id)).not.toContain(id);
      const r = await hop(new CookieJar(), `${s.base}/v1/auth/sso/${id}/start`);
      expect(new URL(r.location!).searchParams.get('sso_error')).toBe('sso/unavailable');
      const unknown = await hop(new CookieJar(), `${s.base}/v1/auth/sso/00000000-0000-4000-8000-000000000000/start`);
      expect(new URL(unknown.location!).searchParams.get('sso_error')).toBe('sso/unavailable');
    } finally {
      await idp.close();
    }
  });
});
