import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { operatorCli, snap, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { alertText, header, loginWithPopup, logoutWithMenu, openFromHeader, seedUser, seriousViolations } from './auth-helpers';
import { apiOf, confirmSetup, enrolInConsole, freshCode } from './operator-helpers';

/**
 * Issue 23.2 in Chromium: a user turns on two-factor sign-in on Account Details and logs in with a code, a recovery
 * code works once, an SSO-style `/?login=1&mfa=` link opens at the code step, and the first admin made by
 * `create-admin` changes the generated password and enrols before the console shows any data.
 */

const t = useServerAndBrowser();

async function newPage(): Promise<Page> {
  const context = await t.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true }); // axe-core is injected
  return context.newPage();
}

/** Login popup: e-mail and password; answers the dialog, now at the code step. */
async function passwordStep(page: Page, email: string, password: string) {
  await page.goto(`${t.server.base}/`);
  const dialog = await openFromHeader(page, 'Login');
  await dialog.getByLabel('Email', { exact: true }).fill(email);
  await dialog.getByLabel('Password', { exact: true }).fill(password);
  await dialog.getByRole('button', { name: 'Login', exact: true }).click();
  const codeStep = page.getByRole('dialog', { name: 'Two-factor sign-in' });
  await codeStep.waitFor({ timeout: 15_000 });
  return codeStep;
}

it('turns on two-factor sign-in from Account Details, logs in with a code, and a recovery code works once', async () => {
  const account = { name: 'Tess Totp', email: uniqueEmail('totp'), password: 'two-factor-1' };
  await seedUser(t.server.base, account);
  const page = await newPage();
  await loginWithPopup(page, t.server.base, account.email, account.password);
  await page.goto(`${t.server.base}/profile`);
  const section = page.getByRole('region', { name: 'Two-factor sign-in' });
  await section.getByText(/^Off\./).waitFor({ timeout: 15_000 });
  await section.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor({ timeout: 15_000 });
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'totp-profile-setup');
  const wrongFirst = page.getByLabel('Authentication code');
  await wrongFirst.fill('000000');
  await page.getByRole('button', { name: 'Verify and turn on' }).click();
  expect(await alertText(section)).toBe('That code did not work. Check your authenticator app and try again.');
  const { secret, recoveryCodes, at } = await confirmSetup(page);
  await section.getByText('On. You sign in with your password and a code from your authenticator app. 10 of 10 recovery codes left.').waitFor({ timeout: 15_000 });
  await snap(page, 'totp-profile-on');

  // Log in again: the password, then the code.
  await logoutWithMenu(page, t.server.base);
  let codeStep = await passwordStep(page, account.email, account.password);
  await codeStep.getByLabel('Authentication code').fill('000000');
  await codeStep.getByRole('button', { name: 'Verify' }).click();
  expect(await alertText(codeStep)).toBe('That code did not work. Check your authenticator app and try again.');
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'totp-login-code');
  await codeStep.getByLabel('Authentication code').fill(await freshCode(secret, at));
  await codeStep.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });

  // A recovery code signs in once.
  for (const [code, works] of [[recoveryCodes[0]!, true], [recoveryCodes[0]!, false], [recoveryCodes[1]!, true]] as const) {
    await logoutWithMenu(page, t.server.base);
    codeStep = await passwordStep(page, account.email, account.password);
    await codeStep.getByRole('button', { name: 'Use a recovery code' }).click();
    await codeStep.getByLabel('Recovery code').fill(code);
    await codeStep.getByRole('button', { name: 'Verify' }).click();
    if (works) await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });
    else expect(await alertText(codeStep)).toBe('That code did not work. Check your authenticator app and try again.');
    if (!works) {
      await codeStep.getByLabel('Recovery code').fill(recoveryCodes[1]!);
      await codeStep.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });
      break;
    }
  }
  await page.goto(`${t.server.base}/profile`);
  await section.getByText(/8 of 10 recovery codes left\./).waitFor({ timeout: 15_000 });

  // An SSO sign-in that needs the code lands on /?login=1&mfa=<challenge>: the popup opens at the code step.
  await logoutWithMenu(page, t.server.base);
  const login = await apiOf(t.server.base)('POST', '/v1/auth/login', undefined, { email: account.email, password: account.password });
  expect(login.body).toMatchObject({ mfaRequired: true });
  await page.goto(`${t.server.base}/?login=1&mfa=${login.body.challenge}`);
  codeStep = page.getByRole('dialog', { name: 'Two-factor sign-in' });
  await codeStep.waitFor({ timeout: 15_000 });
  expect(page.url()).toBe(`${t.server.base}/`); // the challenge leaves the address bar
  await codeStep.getByRole('button', { name: 'Use a recovery code' }).click();
  await codeStep.getByLabel('Recovery code').fill(recoveryCodes[2]!);
  await codeStep.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });
}, 300_000);

it('the first admin changes the generated password and enrols before the console shows anything; later sign-ins need the code', async () => {
  const email = uniqueEmail('first-admin');
  // `npm run admin -- create-admin` beside the running server (the CLI finds it through DATA_DIR).
  const stdout = await operatorCli(t.server, 'create-admin', email, 'Fiona First');
  const generated = /Password: (\S+)/.exec(stdout)![1]!;
  const page = await newPage();
  await loginWithPopup(page, t.server.base, email, generated);
  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Operator Console' }).click();
  await page.waitForURL(`${t.server.base}/admin`, { timeout: 15_000 });

  // Step 1: the generated password must change; no console section, no data.
  await page.getByRole('heading', { level: 2, name: 'Change your password' }).waitFor({ timeout: 15_000 });
  expect(await page.getByRole('navigation', { name: 'Console sections' }).count()).toBe(0);
  expect(await page.getByRole('heading', { level: 2, name: 'Users' }).count()).toBe(0);
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'totp-console-password-step');
  await page.getByRole('button', { name: 'Change Password' }).click();
  const dialog = page.getByRole('dialog', { name: 'Change Password' });
  await dialog.getByLabel('Current Password', { exact: true }).fill(generated);
  await dialog.getByLabel('New Password', { exact: true }).fill('first-admin-2026');
  await dialog.getByLabel('Re-enter New Password', { exact: true }).fill('first-admin-2026');
  await dialog.getByRole('button', { name: 'Change Password' }).click();
  await dialog.getByRole('button', { name: 'Got It' }).click();

  // Step 2: an admin without a second factor gets the enrol step, still no data.
  await page.getByRole('heading', { level: 2, name: 'Turn on two-factor sign-in' }).waitFor({ timeout: 15_000 });
  expect(await page.getByRole('navigation', { name: 'Console sections' }).count()).toBe(0);
  await snap(page, 'totp-console-enrol-step');
  const { secret, at } = await enrolInConsole(page);
  await page.getByRole('heading', { level: 2, name: 'Users' }).waitFor({ timeout: 15_000 });
  await page.waitForURL(`${t.server.base}/admin/users`, { timeout: 15_000 });
  await page.getByRole('navigation', { name: 'Console sections' }).waitFor();

  // Signed out and in again: the code step, then the console at once; the sign-ins are in the audit log.
  await logoutWithMenu(page, t.server.base);
  const codeStep = await passwordStep(page, email, 'first-admin-2026');
  await codeStep.getByLabel('Authentication code').fill(await freshCode(secret, at));
  await codeStep.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });
  await page.goto(`${t.server.base}/admin/audit`);
  await page.getByRole('heading', { level: 2, name: 'Audit log' }).waitFor({ timeout: 15_000 });
  const signIns = page.getByRole('row').filter({ hasText: 'auth.sign-in' }).filter({ hasText: email });
  await expect.poll(() => signIns.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
  // Turning it on was the admin's own account's change, not a console action.
  await page.getByRole('row').filter({ hasText: 'user.totp.enable' }).filter({ hasText: email }).getByText('own account').waitFor({ timeout: 15_000 });
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'totp-console-audit');
}, 300_000);
