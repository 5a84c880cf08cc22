import { expect } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { header } from './auth-helpers';

/**
 * Operators in browser tests (issue 23.2): the console opens only for a sign-in with a second factor, so every test
 * that uses it enrols an authenticator (in the console's enrol step, or through the API) and signs in with its code.
 * The one place for it; `totpNow` plays the authenticator app.
 */

/** The code an authenticator app shows now for a base32 secret (RFC 6238: SHA-1, 6 digits, 30 s). */
export const totpNow = (secret: string, at = Date.now()): string =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

/**
 * A code from a time step no code was used in yet: waits for the next step when `after` (the last step used, ms)
 * falls in the current one, since a code is accepted once.
 */
export async function freshCode(secret: string, usedAt: number): Promise<string> {
  const step = (t: number) => Math.floor(t / 30_000);
  while (step(Date.now()) <= step(usedAt)) await new Promise((r) => setTimeout(r, 500));
  return totpNow(secret);
}

/** In the console's enrol step: set up the authenticator, confirm with its code, put the recovery codes away. */
export async function enrolInConsole(page: Page): Promise<{ secret: string; recoveryCodes: string[]; at: number }> {
  await page.getByRole('heading', { level: 2, name: 'Turn on two-factor sign-in' }).waitFor({ timeout: 15_000 });
  await page.getByRole('button', { name: 'Set up authenticator' }).click();
  return confirmSetup(page);
}

/** After "Turn on"/"Set up authenticator": reads the setup key, types the code, collects the recovery codes. */
export async function confirmSetup(page: Page): Promise<{ secret: string; recoveryCodes: string[]; at: number }> {
  const key = page.getByLabel('Setup key');
  await key.waitFor({ timeout: 15_000 });
  const secret = (await key.innerText()).replace(/\s/g, '');
  const at = Date.now();
  await page.getByLabel('Authentication code').fill(totpNow(secret, at));
  await page.getByRole('button', { name: 'Verify and turn on' }).click();
  const list = page.getByRole('list', { name: 'Recovery codes' });
  await list.waitFor({ timeout: 15_000 });
  const recoveryCodes = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim());
  expect(recoveryCodes).toHaveLength(10);
  await page.getByRole('button', { name: 'I saved my recovery codes' }).click();
  return { secret, recoveryCodes, at };
}

/** Signed in (password only) as an admin: opens the console from the account menu, enrolling when it asks. */
export async function openConsole(page: Page, base: string): Promise<{ secret: string; recoveryCodes: string[]; at: number } | null> {
  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Operator Console' }).click();
  // /admin: the sections' routes (→ /admin/users) render only once the console opens.
  await page.waitForURL(new RegExp(`^${base}/admin(/|$)`), { timeout: 15_000 });
  const enrol = page.getByRole('heading', { level: 2, name: 'Turn on two-factor sign-in' });
  const users = page.getByRole('heading', { level: 2, name: 'Users' });
  await enrol.or(users).first().waitFor({ timeout: 15_000 });
  const enrolled = (await enrol.isVisible()) ? await enrolInConsole(page) : null;
  await users.waitFor({ timeout: 15_000 });
  await page.waitForURL(`${base}/admin/users`, { timeout: 15_000 });
  return enrolled;
}

type Api = (method: string, path: string, token?: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** A JSON call against the server (the idtoken header when given). */
export const apiOf = (base: string): Api => async (method, path, token, body) => {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { idtoken: token } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
};

/**
 * A console-ready id token for an admin through the API: a CLI-made first admin changes the generated password,
 * then the authenticator is enrolled with its first code.
 */
export async function operatorApiToken(base: string, email: string, password: string): Promise<{ token: string; secret: string; password: string }> {
  const api = apiOf(base);
  const login = await api('POST', '/v1/auth/login', undefined, { email, password });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  let token = login.body.accessToken as string;
  let current = password;
  const status = await api('GET', '/v1/user/totp', token);
  if (status.body.passwordMustChange) {
    current = `${password}-changed`;
    const changed = await api('POST', '/v1/user/password', token, { currentPassword: password, newPassword: current, confirmPassword: current });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    token = changed.body.accessToken;
  }
  const setup = await api('POST', '/v1/user/totp/setup', token);
  expect(setup.status, JSON.stringify(setup.body)).toBe(200);
  const confirmed = await api('POST', '/v1/user/totp/confirm', token, { code: totpNow(setup.body.secret) });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return { token: confirmed.body.session.accessToken, secret: setup.body.secret, password: current };
}
