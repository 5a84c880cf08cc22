import { expect, it } from 'vitest';
import { snap, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { alertText, avatarText, header, loginWithPopup, logoutWithMenu, openFromHeader, seedUser, seriousViolations, solveCaptcha } from './auth-helpers';

const t = useServerAndBrowser();

async function newPage(viewport = { width: 1280, height: 800 }, bypassCSP = false) {
  const context = await t.newContext({ viewport, bypassCSP });
  return context.newPage();
}

it('sends signed-out visitors of every signed-in-only route to /', async () => {
  const page = await newPage();
  for (const route of ['/dashboard', '/welcome', '/setup', '/profile', '/success?orderId=x', '/failed', '/connect#e30=']) {
    await page.goto(t.server.base + route);
    await page.waitForURL(`${t.server.base}/`, { timeout: 15_000 });
    await header(page).getByRole('button', { name: 'Sign Up', exact: true }).waitFor();
  }
});

it('signs up through the popup (every client message, real captcha), greets on /welcome, then opens /dashboard', async () => {
  const page = await newPage();
  await page.goto(t.server.base + '/');
  await snap(page, 'auth-landing-header');
  const dialog = await openFromHeader(page, 'Sign Up');
  const submit = dialog.getByRole('button', { name: 'Sign Up', exact: true });

  await dialog.getByLabel('Name', { exact: true }).fill('   ');
  await submit.click();
  expect(await alertText(dialog)).toBe('All fields are required!');

  const email = uniqueEmail('ada');
  await dialog.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
  await dialog.getByLabel('Email', { exact: true }).fill(email);
  await dialog.getByLabel('Password', { exact: true }).fill('analytical1');
  await dialog.getByLabel('Re-enter Password', { exact: true }).fill('analytical2');
  await submit.click();
  expect(await alertText(dialog)).toBe('Password does not match!');

  await dialog.getByLabel('Re-enter Password', { exact: true }).fill('analytical1');
  await submit.click();
  expect(await alertText(dialog)).toBe('captcha verification is required');
  await snap(page, 'auth-signup-popup-error');

  await solveCaptcha(dialog);
  // Solving the captcha answers its message.
  await expect.poll(() => dialog.getByText('captcha verification is required').count()).toBe(0);
  await snap(page, 'auth-signup-popup-verified');
  await submit.click();
  await page.waitForURL(`${t.server.base}/welcome`, { timeout: 15_000 });
  await page.getByRole('heading', { level: 1, name: 'Welcome to the product, Ada Lovelace!' }).waitFor();
  expect(await page.evaluate(() => sessionStorage.getItem('signup_username'))).toBe('Ada Lovelace');
  await snap(page, 'auth-welcome');

  // Spec §9: the welcome page moves on to the dashboard by itself (after 5 s).
  await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 20_000 });
  await expect.poll(() => avatarText(page)).toBe('AL');
  await expect(header(page).getByRole('link', { name: 'Dashboard' }).isVisible()).resolves.toBe(true);
  await expect(header(page).getByRole('button', { name: 'Login', exact: true }).count()).resolves.toBe(0);

  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Account Details' }).waitFor();
  await snap(page, 'auth-user-menu');
  await page.keyboard.press('Escape');

  await logoutWithMenu(page, t.server.base);
  await page.goto(`${t.server.base}/dashboard`);
  await page.waitForURL(`${t.server.base}/`, { timeout: 15_000 });
});

it('shows the server messages of sign-up (in use, weak password, invalid e-mail)', async () => {
  const taken = { name: 'Grace Hopper', email: uniqueEmail('grace'), password: 'cobol1959' };
  await seedUser(t.server.base, taken);
  const page = await newPage();
  await page.goto(t.server.base + '/');
  const dialog = await openFromHeader(page, 'Sign Up');
  const attempt = async (email: string, password: string) => {
    await dialog.getByLabel('Name', { exact: true }).fill('Grace Hopper');
    await dialog.getByLabel('Email', { exact: true }).fill(email);
    await dialog.getByLabel('Password', { exact: true }).fill(password);
    await dialog.getByLabel('Re-enter Password', { exact: true }).fill(password);
    await solveCaptcha(dialog);
    await dialog.getByRole('button', { name: 'Sign Up', exact: true }).click();
    return alertText(dialog);
  };
  expect(await attempt(taken.email, 'another1')).toBe('The provided email is already in use by an existing user');
  expect(await attempt(uniqueEmail('weak'), 'abc12')).toBe('Password should be at least 6 characters long');
  expect(await attempt('not-an-email', 'secret12')).toBe('Email address is invalid');
  await snap(page, 'auth-signup-server-error');
  expect(page.url()).toBe(`${t.server.base}/`);
});

it('reports a failed login, switches between Login and Sign Up, and logs in to /dashboard', async () => {
  const account = { name: 'Plato', email: uniqueEmail('plato'), password: 'republic1' };
  await seedUser(t.server.base, account);
  const page = await newPage();
  await page.goto(t.server.base + '/');
  let dialog = await openFromHeader(page, 'Login');
  await dialog.getByRole('button', { name: 'Sign Up', exact: true }).click();
  await page.getByRole('dialog', { name: 'Sign Up' }).getByRole('button', { name: 'Login', exact: true }).click();
  dialog = page.getByRole('dialog', { name: 'Login' });

  await dialog.getByLabel('Email', { exact: true }).fill(account.email);
  await dialog.getByLabel('Password', { exact: true }).fill('wrong-password');
  await dialog.getByRole('button', { name: 'Login', exact: true }).click();
  expect(await alertText(dialog)).toBe('Unable to login. Please cross check your login details.');
  await snap(page, 'auth-login-popup-error');

  await dialog.getByLabel('Password', { exact: true }).fill(account.password);
  await dialog.getByRole('button', { name: 'Login', exact: true }).click();
  await page.waitForURL(`${t.server.base}/dashboard`, { timeout: 15_000 });
  await expect.poll(() => avatarText(page)).toBe('P');

  // A reload keeps the session (refresh cookie), and logout ends it for good.
  await page.reload();
  await expect.poll(() => avatarText(page)).toBe('P');
  await logoutWithMenu(page, t.server.base);
  await page.reload();
  await header(page).getByRole('button', { name: 'Login', exact: true }).waitFor();
  await loginWithPopup(page, t.server.base, account.email, account.password);
});

it('fits a 360 px screen with the menu button', async () => {
  const page = await newPage({ width: 360, height: 740 });
  await page.goto(t.server.base + '/');
  const toggle = header(page).getByRole('button', { name: 'Open menu' });
  await toggle.click();
  await header(page).getByRole('link', { name: 'SwiftShader' }).waitFor();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  await snap(page, 'auth-header-mobile-menu');
  await header(page).getByRole('button', { name: 'Login', exact: true }).click();
  await page.getByRole('dialog', { name: 'Login' }).waitFor();
  await snap(page, 'auth-login-popup-mobile');
});

it('has no serious axe violations in the account popups and pages', async () => {
  const account = { name: 'Katherine Johnson', email: uniqueEmail('kj'), password: 'orbit-1962' };
  await seedUser(t.server.base, account);
  // bypassCSP only so the test can inject axe-core; every other test runs under the app's real CSP.
  const page = await newPage({ width: 1280, height: 800 }, true);
  const found: string[] = [];
  const check = async (where: string) => found.push(...(await seriousViolations(page)).map((v) => `${where}: ${v}`));
  await page.goto(t.server.base + '/');
  const login = await openFromHeader(page, 'Login');
  await check('login');
  await login.getByRole('button', { name: 'Sign Up', exact: true }).click();
  await page.getByRole('dialog', { name: 'Sign Up' }).getByRole('checkbox', { name: "I'm not a robot" }).waitFor();
  await check('sign up');
  await page.getByRole('dialog', { name: 'Sign Up' }).getByRole('button', { name: 'Login', exact: true }).click();
  await page.getByRole('dialog', { name: 'Login' }).getByRole('button', { name: 'Forgot Password', exact: true }).click();
  await page.getByRole('dialog', { name: 'Forgot Password' }).waitFor();
  await check('forgot password');
  await page.keyboard.press('Escape');
  await page.goto(t.server.base + '/reset-password?token=abc');
  await page.getByLabel('New Password', { exact: true }).waitFor();
  await check('reset page');
  await loginWithPopup(page, t.server.base, account.email, account.password);
  await page.goto(t.server.base + '/profile');
  await expect.poll(() => page.getByLabel('Display Name').inputValue()).toBe(account.name);
  await check('profile');
  await page.getByRole('button', { name: 'Change Password' }).click();
  await page.getByRole('dialog', { name: 'Change Password' }).waitFor();
  await check('change password');
  expect(found).toEqual([]);
});
