import { afterAll, beforeAll, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { operatorCli, snap, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { startIdp, type TestIdp } from '../../server/test/oidc-idp';
import { avatarText, header, logoutWithMenu, openFromHeader, seedUser } from './auth-helpers';
import { payOnCheckout, PAYING_CARD } from './buy-helpers';
import { api } from './connect-helpers';

/**
 * Single sign-on in Chromium (issue 23.1) against a real OpenID provider (oidc-provider on a loopback port): an
 * operator adds the school's provider in the console; a new student signs up with "Continue with <school>" and
 * logs in with it again; a student on a course's roster, who never had an account, signs in with it and sees the
 * course at once; a refused sign-in says why in the Login popup.
 */

const SCHOOL = 'Springfield High';

const t = useServerAndBrowser();
let idp: TestIdp;
beforeAll(async () => {
  idp = await startIdp({ redirectUri: `${t.server.base}/v1/auth/sso/callback` });
});
afterAll(async () => {
  await idp?.close();
});

/** A school account at the provider (its login form takes the account id). */
function schoolAccount(email: string, name: string): string {
  const id = `s-${Math.random().toString(36).slice(2, 10)}`;
  idp.accounts.set(id, { email, emailVerified: true, name });
  return id;
}

async function fetchJson(method: string, route: string, o: { token?: string; cookie?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (o.token) headers.idtoken = o.token;
  if (o.cookie) headers.cookie = `hd_session=${o.cookie}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.server.base}${route}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const cookie = /hd_session=([^;]+)/.exec(res.headers.getSetCookie().join('\n'))?.[1];
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any, cookie };
}

/**
 * An operator as the README makes one (`create-admin`), who changes the generated password and turns on
 * two-factor sign-in, then signs in with a code: their refresh cookie, for a browser context.
 */
async function operatorCookie(): Promise<string> {
  const email = uniqueEmail('operator');
  const stdout = await operatorCli(t.server, 'create-admin', email, 'Olga Operator');
  const password = /Password: (\S+)/.exec(stdout)![1]!;
  let { body: session } = await fetchJson('POST', '/v1/auth/login', { body: { email, password } });
  const status = await fetchJson('GET', '/v1/user/totp', { token: session.accessToken });
  if (status.body?.passwordMustChange) {
    const next = 'operator-console-2026';
    session = (await fetchJson('POST', '/v1/user/password', { token: session.accessToken, body: { currentPassword: password, newPassword: next, confirmPassword: next } })).body;
  }
  const setup = await fetchJson('POST', '/v1/user/totp/setup', { token: session.accessToken });
  expect(setup.status).toBe(200);
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.secret) });
  const confirmed = await fetchJson('POST', '/v1/user/totp/confirm', { token: session.accessToken, body: { code: totp.generate() } });
  expect(confirmed.status).toBe(200);
  expect(confirmed.cookie).toBeTruthy();
  return confirmed.cookie!;
}

async function newPage(): Promise<Page> {
  const context = await t.browser.newContext({ viewport: { width: 1280, height: 900 } });
  return context.newPage();
}

/** Clicks "Continue with <school>" in the open popup and signs in at the provider's page (if it asks). */
async function continueWithSchool(page: Page, dialogName: 'Login' | 'Sign Up', account: string): Promise<void> {
  const dialog = page.getByRole('dialog', { name: dialogName });
  await dialog.getByRole('link', { name: `Continue with ${SCHOOL}` }).click();
  await page.waitForURL((url) => url.origin === idp.issuer || url.pathname === '/dashboard', { timeout: 20_000 });
  if (new URL(page.url()).origin === idp.issuer) {
    await page.getByLabel('School account').fill(account);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 20_000 });
  // Signed in: the header's account menu (its code loads on demand; slow on a loaded machine).
  await header(page).getByRole('button', { name: /^Account menu/ }).waitFor({ timeout: 30_000 });
}

it('an operator adds the school in the console; a student signs up with it and logs in with it again', { timeout: 240_000 }, async () => {
  // The operator's console: Single sign-on → Add identity provider.
  const operator = await newPage();
  await operator.context().addCookies([
    { name: 'hd_session', value: await operatorCookie(), url: `${t.server.base}/v1/auth` },
    { name: 'hd_signed_in', value: '1', url: t.server.base },
  ]);
  await operator.goto(`${t.server.base}/admin/sso`);
  await operator.getByRole('heading', { level: 2, name: 'Single sign-on' }).waitFor({ timeout: 20_000 });
  await operator.getByText(`${t.server.base}/v1/auth/sso/callback`).waitFor();
  await operator.getByRole('button', { name: 'Add identity provider' }).click();
  const form = operator.getByRole('dialog', { name: 'Add identity provider' });
  await form.getByLabel(/School name/).fill(SCHOOL);
  await form.getByLabel('Issuer URL').fill(idp.issuer);
  await form.getByLabel('Client id').fill(idp.clientId);
  await form.getByLabel('Client secret').fill(idp.clientSecret);
  await form.getByLabel('Allowed e-mail domains').fill('springfield.edu');
  await snap(operator, 'sso-01-console-add');
  await form.getByRole('button', { name: 'Add provider' }).click();
  await operator.getByRole('status').filter({ hasText: `${SCHOOL} added` }).waitFor({ timeout: 20_000 });
  await operator.getByRole('cell', { name: `Continue with ${SCHOOL}` }).waitFor();
  expect(await operator.content()).not.toContain(idp.clientSecret);
  await snap(operator, 'sso-02-console-list');

  // A new student: Sign Up → Continue with Springfield High → the school's page → the dashboard, signed in.
  const email = `lisa-${Date.now()}@springfield.edu`;
  const lisa = schoolAccount(email, 'Lisa Simpson');
  const page = await newPage();
  await page.goto(t.server.base);
  const signup = await openFromHeader(page, 'Sign Up');
  await signup.getByRole('link', { name: `Continue with ${SCHOOL}` }).waitFor({ timeout: 20_000 });
  await snap(page, 'sso-03-signup-popup');
  await continueWithSchool(page, 'Sign Up', lisa);
  expect(await avatarText(page)).toBe('LS');
  await snap(page, 'sso-04-signed-up');

  // Logged out, then in again with the same button: the same account.
  await logoutWithMenu(page, t.server.base);
  await openFromHeader(page, 'Login');
  await snap(page, 'sso-05-login-popup');
  await continueWithSchool(page, 'Login', lisa);
  await snap(page, 'sso-05b-logged-in');
  expect(await avatarText(page)).toBe('LS');
  const me = await page.evaluate(async () => (await fetch('/v1/auth/refresh', { method: 'POST' })).json());
  expect(me.user.email).toBe(email);
});

it('a student on a roster who never had an account signs in with the school and sees the course at once', { timeout: 240_000 }, async () => {
  // An instructor with a paid course whose student list names the student's school address.
  const instructor = { name: 'Edna Krabappel', email: uniqueEmail('instructor'), password: 'classroom42' };
  await seedUser(t.server.base, instructor);
  expect(await operatorCli(t.server, 'grant', instructor.email, 'instructor')).toContain('now has the instructor claim');
  const { accessToken: token } = await api(t.server.base, 'POST', '/v1/auth/login', undefined, { email: instructor.email, password: instructor.password });
  const course = { Platform: 'Unreal Engine', VMs: 1, StartAt: Date.now() - 60_000, ExpiresAt: Date.now() + 7 * 86_400_000, Region: 'DE' };
  const { prices } = await api(t.server.base, 'POST', '/v1/pack/cost', token, course);
  const { url } = await api(t.server.base, 'POST', '/v1/pack/recharge', token, { ...course, TotalHours: 10, Price: prices['10'], success_url: `${t.server.base}/success`, cancel_url: `${t.server.base}/failed` });
  const checkout = await newPage();
  await checkout.goto(url);
  await payOnCheckout(checkout, PAYING_CARD);
  await checkout.waitForURL(/\/success\?orderId=/, { timeout: 30_000 });
  await checkout.context().close();
  let packId = '';
  for (let i = 0; i < 60 && !packId; i++) {
    packId = (await api(t.server.base, 'GET', '/v1/user/wallet/balance', token)).balance[0]?.packId ?? '';
    if (!packId) await new Promise((r) => setTimeout(r, 500));
  }
  const bart = `bart-${Date.now()}@springfield.edu`;
  const fd = new FormData();
  fd.append('packId', packId);
  fd.append('attachment', new Blob([`${bart}\n`]), 'students.txt');
  expect((await fetch(`${t.server.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: token }, body: fd })).status).toBe(200);

  // The student: Login → Continue with Springfield High → the course, with Connect (no e-mail link to open first).
  const page = await newPage();
  await page.goto(`${t.server.base}/?login=1`);
  await page.getByRole('dialog', { name: 'Login' }).waitFor({ timeout: 20_000 });
  await continueWithSchool(page, 'Login', schoolAccount(bart, 'Bart Simpson'));
  await page.getByRole('article').getByRole('button', { name: 'Connect' }).waitFor({ timeout: 20_000 });
  await page.getByText('Connect once your Instructor has started the machines.').waitFor();
  expect(await page.getByText('Your course appears here once you verify your e-mail address.').count()).toBe(0);
  await snap(page, 'sso-06-roster-student');
});

it('a school account outside the allowed domains is refused, and the Login popup says why', { timeout: 120_000 }, async () => {
  const page = await newPage();
  await page.goto(t.server.base);
  await openFromHeader(page, 'Login');
  const dialog = page.getByRole('dialog', { name: 'Login' });
  await dialog.getByRole('link', { name: `Continue with ${SCHOOL}` }).click();
  await page.waitForURL((url) => url.origin === idp.issuer, { timeout: 20_000 });
  await page.getByLabel('School account').fill(schoolAccount(`milhouse-${Date.now()}@shelbyville.edu`, 'Milhouse'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${t.server.base}/`, { timeout: 20_000 }).catch(() => undefined);
  await snap(page, 'sso-07-refused');
  await page.getByRole('dialog', { name: 'Login' }).getByRole('alert').filter({ hasText: 'Your e-mail address is not one this school sign-in accepts.' }).waitFor({ timeout: 30_000 });
  expect(new URL(page.url()).search).toBe('');
  await snap(page, 'sso-08-refused-message');
});
