/**
 * A user with a balance, made through a running server's public HTTP API as a browser makes one: sign up (the ALTCHA
 * proof of work solved here), then buy an hours pack through the built-in hosted checkout (recharge, the card form
 * posted with the test card 4242…; the server's signed webhook credits the machine). bench:api seeds its reader with it.
 */
import { createHash, randomBytes } from 'node:crypto';

interface Challenge {
  algorithm: string;
  challenge: string;
  salt: string;
  signature: string;
  maxnumber: number;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return { status: res.status, headers: res.headers, json: () => JSON.parse(text) as Record<string, unknown> };
}

/** The captcha payload the sign-up form sends: the ALTCHA challenge solved by brute force (node's SHA-256). */
async function solveCaptcha(base: string): Promise<string> {
  const c = (await call(base, 'GET', '/v1/captcha/challenge')).json() as unknown as Challenge;
  for (let n = 0; n <= c.maxnumber; n++) {
    if (createHash('sha256').update(c.salt + n).digest('hex') === c.challenge) {
      const payload = { algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature };
      return Buffer.from(JSON.stringify(payload)).toString('base64');
    }
  }
  throw new Error('captcha challenge could not be solved');
}

export interface HttpUser {
  uid: string;
  email: string;
  password: string;
  /** The id token sign-up answered (15 minutes); `signIn` gets a fresh one. */
  token: string;
}

/** Signs up a new user through the API. */
export async function signUp(base: string, tag = 'bench'): Promise<HttpUser> {
  const email = `${tag}-${randomBytes(5).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await call(base, 'POST', '/v1/auth/signup', {
    name: 'Bench User',
    email,
    password,
    confirmPassword: password,
    captcha: await solveCaptcha(base),
  });
  const body = res.json() as { accessToken: string; user: { uid: string } };
  return { uid: body.user.uid, email, password, token: body.accessToken };
}

/** A fresh id token for the user (POST /v1/auth/login). */
export async function signIn(base: string, user: { email: string; password: string }): Promise<string> {
  const res = await call(base, 'POST', '/v1/auth/login', { email: user.email, password: user.password });
  return String(res.json().accessToken);
}

/** Buys `packId` for the user through the built-in checkout and returns once the order is paid. */
export async function buyPack(base: string, token: string, packId: string): Promise<void> {
  const checkout = await call(
    base,
    'POST',
    '/v1/user/wallet/recharge',
    { packId, success_url: `${base}/success`, cancel_url: `${base}/failed` },
    { idtoken: token },
  );
  const sessionPath = new URL(String(checkout.json().url)).pathname;
  const form = new URLSearchParams({ number: '4242 4242 4242 4242', exp: '12/34', cvc: '123', name: 'Bench User' });
  const paid = await fetch(`${base}${sessionPath}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  await paid.text();
  const location = paid.headers.get('location') ?? '';
  if (paid.status !== 303 || !location.includes('/success')) throw new Error(`checkout payment answered ${paid.status} → ${location}`);
}
