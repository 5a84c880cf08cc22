import { createHash, randomBytes, randomInt } from 'node:crypto';
import { solveChallenge } from 'altcha-lib/v1';
import type { TestServer } from './harness';
import { insertUser, toPrincipal, type UserRow } from '../src/modules/identity/users';
import { createSession, SESSION_COOKIE } from '../src/modules/identity/sessions';
import { enrolTotp } from './admin-helpers';

/** Helpers for tests that need accounts. Other modules' tests may use createUser() to get a signed-in user fast. */

export const uniqueEmail = (tag = 'user') => `${tag}-${randomBytes(5).toString('hex')}@example.com`;

/** A random client address; servers started with TRUST_PROXY=true read it from X-Forwarded-For. */
export const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
export const fromIp = (ip: string) => ({ 'x-forwarded-for': ip });

interface Challenge {
  algorithm: string;
  challenge: string;
  salt: string;
  signature: string;
  maxnumber: number;
}

const encode = (c: Challenge, number: number) =>
  Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number, salt: c.salt, signature: c.signature })).toString('base64');

async function fetchChallenge(s: TestServer): Promise<Challenge> {
  const res = await s.call('GET', '/v1/captcha/challenge');
  if (res.status !== 200) throw new Error(`challenge: ${res.status}`);
  return res.body as Challenge;
}

/** Solves a challenge with altcha-lib's own solver (what the widget runs), answering the widget's payload. */
export async function solveWithAltcha(s: TestServer): Promise<string> {
  const c = await fetchChallenge(s);
  const solution = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  if (!solution) throw new Error('captcha challenge could not be solved');
  return encode(c, solution.number);
}

/** The same proof of work with node's synchronous SHA-256 (about 50x faster than the WebCrypto loop above). */
export async function solveCaptcha(s: TestServer): Promise<string> {
  const c = await fetchChallenge(s);
  for (let n = 0; n <= c.maxnumber; n++) {
    if (createHash('sha256').update(c.salt + n).digest('hex') === c.challenge) return encode(c, n);
  }
  throw new Error('captcha challenge could not be solved');
}

/** The hd_session value a response set ('' when it cleared it, undefined when it did not touch it). */
export function sessionCookie(headers: Headers): string | undefined {
  for (const line of headers.getSetCookie()) {
    const m = new RegExp(`^${SESSION_COOKIE}=([^;]*)`).exec(line);
    if (m) return decodeURIComponent(m[1]!);
  }
  return undefined;
}

export const withCookie = (cookie: string | undefined) => ({ cookie: `${SESSION_COOKIE}=${cookie ?? ''}` });

/** Signs up through the API (captcha solved); throws unless it answers 201. */
export async function signUp(s: TestServer, o: { name?: string; email?: string; password?: string; ip?: string } = {}) {
  const email = o.email ?? uniqueEmail();
  const password = o.password ?? 'secret-123';
  const res = await s.call('POST', '/v1/auth/signup', {
    body: { name: o.name ?? 'Ada Lovelace', email, password, confirmPassword: password, captcha: await solveCaptcha(s) },
    headers: o.ip ? fromIp(o.ip) : {},
  });
  if (res.status !== 201) throw new Error(`signup answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { email, password, token: res.body.accessToken as string, user: res.body.user, cookie: sessionCookie(res.headers)! };
}

/**
 * Creates a user directly in the database with an id token and a refresh cookie (no captcha, no rate limits). An
 * admin also enrols an authenticator through the API (./admin-helpers.ts): its token is signed in with the second
 * factor the console requires, and `totpSecret` makes further codes. `secondFactor: false` leaves an admin without.
 */
export async function createUser(
  s: TestServer,
  o: { name?: string; email?: string; password?: string; instructor?: boolean; admin?: boolean; secondFactor?: boolean } = {},
): Promise<{ row: UserRow; email: string; password: string; token: string; cookie: string; totpSecret?: string; recoveryCodes?: string[] }> {
  const email = o.email ?? uniqueEmail();
  const password = o.password ?? 'secret-123';
  const now = s.app.ctx.clock.now();
  const row = await insertUser(s.database.db, { email, displayName: o.name ?? 'Test User', password, instructor: o.instructor, admin: o.admin, now });
  if (!row) throw new Error(`user ${email} exists`);
  const { cookie } = await createSession(s.database.db, row.id, now);
  const token = await s.app.ctx.tokens.sign(toPrincipal(row));
  if (!o.admin || o.secondFactor === false) return { row, email: row.email, password, token, cookie };
  const enrolled = await enrolTotp(s.call, token, s.app.ctx.clock.now());
  return { row, email: row.email, password, token: enrolled.token, cookie: enrolled.cookie, totpSecret: enrolled.secret, recoveryCodes: enrolled.recoveryCodes };
}
