import { expect, it } from 'vitest';
import { snap, uniqueEmail } from '../harness';
import { alertText, avatarText, header, loginWithPopup, logoutWithMenu, mailedLink, openFromHeader, seedUser, withMailServer } from './auth-helpers';

const setup = withMailServer();

async function newPage() {
  return (await setup.newContext()).newPage();
}

it('resets a forgotten password through the e-mailed link, then logs in with the new one', async () => {
  const account = { name: 'Alan Turing', email: uniqueEmail('alan'), password: 'enigma1912' };
  await seedUser(setup.server.base, account);
  const page = await newPage();
  await page.goto(setup.server.base + '/');
  const login = await openFromHeader(page, 'Login');
  await login.getByRole('button', { name: 'Forgot Password', exact: true }).click();
  const forgot = page.getByRole('dialog', { name: 'Forgot Password' });
  await forgot.waitFor();
  await expect(page.getByRole('dialog', { name: 'Login' }).count()).resolves.toBe(0);

  await forgot.getByRole('button', { name: 'Send Reset Link' }).click();
  expect(await alertText(forgot)).toBe('Please enter your email.');
  await snap(page, 'auth-forgot-popup-error');
  await forgot.getByLabel('Email', { exact: true }).fill(account.email);
  await forgot.getByRole('button', { name: 'Send Reset Link' }).click();
  const sent = page.getByRole('dialog', { name: 'Resent Link Sent!' });
  await sent.getByText("Please check your email. Click on the link there and you'll be able to enter a new password.").waitFor();
  await snap(page, 'auth-forgot-popup-sent');
  await sent.getByRole('button', { name: 'Got It' }).click();

  const link = await mailedLink(setup.inbox, account.email, '/reset-password');
  expect(link.startsWith(`${setup.server.base}/reset-password?token=`)).toBe(true);
  await page.goto(link);
  await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
  await snap(page, 'auth-reset-page');
  await page.getByLabel('New Password', { exact: true }).fill('bombe-1940');
  await page.getByLabel('Re-enter New Password', { exact: true }).fill('bombe-1941');
  await page.getByRole('button', { name: 'Reset Password' }).click();
  expect(await alertText(page.locator('main'))).toBe('Password does not match!');
  await page.getByLabel('Re-enter New Password', { exact: true }).fill('bombe-1940');
  await page.getByRole('button', { name: 'Reset Password' }).click();
  await page.getByText('Your password has been reset. You can now log in with your new password.').waitFor();
  await snap(page, 'auth-reset-done');

  // The page's Login button opens the popup; the old password is refused, the new one works.
  await page.getByRole('main').getByRole('button', { name: 'Login' }).click();
  const dialog = page.getByRole('dialog', { name: 'Login' });
  await dialog.getByLabel('Email', { exact: true }).fill(account.email);
  await dialog.getByLabel('Password', { exact: true }).fill(account.password);
  await dialog.getByRole('button', { name: 'Login', exact: true }).click();
  expect(await alertText(dialog)).toBe('Unable to login. Please cross check your login details.');
  await dialog.getByLabel('Password', { exact: true }).fill('bombe-1940');
  await dialog.getByRole('button', { name: 'Login', exact: true }).click();
  await page.waitForURL(`${setup.server.base}/dashboard`, { timeout: 15_000 });

  // The link works once.
  await logoutWithMenu(page, setup.server.base);
  await page.goto(link);
  await page.getByLabel('New Password', { exact: true }).fill('another-1');
  await page.getByLabel('Re-enter New Password', { exact: true }).fill('another-1');
  await page.getByRole('button', { name: 'Reset Password' }).click();
  expect(await alertText(page.locator('main'))).toBe('This reset link is invalid or has expired. Please request a new one.');
});

it('changes the password on Account Details with every message of the modal and its success state', async () => {
  const account = { name: 'Ada King Lovelace', email: uniqueEmail('ada'), password: 'engine-1843' };
  await seedUser(setup.server.base, account);
  const page = await newPage();
  await loginWithPopup(page, setup.server.base, account.email, account.password);
  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Account Details' }).click();
  await page.waitForURL(`${setup.server.base}/profile`);
  await page.getByRole('heading', { level: 1, name: 'Account Details' }).waitFor();
  const name = page.getByLabel('Display Name');
  await expect.poll(() => name.inputValue()).toBe('Ada King Lovelace');
  await expect(name.isDisabled()).resolves.toBe(true);
  await expect(page.getByLabel('E-mail').inputValue()).resolves.toBe(account.email);
  await expect(page.getByLabel('E-mail').isDisabled()).resolves.toBe(true);
  expect(await avatarText(page)).toBe('AL');
  await snap(page, 'auth-profile');

  await page.getByRole('button', { name: 'Change Password' }).click();
  const modal = page.getByRole('dialog', { name: 'Change Password' });
  await modal.waitFor();
  const current = modal.getByLabel('Current Password', { exact: true });
  const next = modal.getByLabel('New Password', { exact: true });
  const confirm = modal.getByLabel('Re-enter New Password', { exact: true });
  const submit = modal.getByRole('button', { name: 'Change Password' });

  // Show/hide toggles, one per field.
  const toggles = modal.getByRole('button', { name: 'Show password' });
  expect(await toggles.count()).toBe(3);
  await current.fill('peek');
  await toggles.first().click();
  await expect(current.getAttribute('type')).resolves.toBe('text');
  await modal.getByRole('button', { name: 'Hide password' }).click();
  await expect(current.getAttribute('type')).resolves.toBe('password');
  await current.fill('');

  await submit.click();
  expect(await alertText(modal)).toBe('All fields are required.');
  await snap(page, 'auth-change-password-error');
  await current.pressSequentially('x');
  await expect.poll(() => modal.getByRole('alert').count()).toBe(0);

  await current.fill(account.password);
  await next.fill('difference-1');
  await confirm.fill('difference-2');
  await submit.click();
  expect(await alertText(modal)).toBe('New password and confirm password should be same.');
  await next.pressSequentially('!');
  await expect.poll(() => modal.getByRole('alert').count()).toBe(0);

  await next.fill(` ${account.password} `);
  await confirm.fill(` ${account.password} `);
  await submit.click();
  expect(await alertText(modal)).toBe('New password should not be same.');

  await current.fill('not-my-password');
  await next.fill('difference-1');
  await confirm.fill('difference-1');
  await submit.click();
  expect(await alertText(modal)).toBe('There was an error in updating your password.');

  await current.fill(account.password);
  await submit.click();
  await modal.getByText('Your password has been updated successfully.').waitFor();
  await snap(page, 'auth-change-password-success');
  await modal.getByRole('button', { name: 'Got It' }).click();
  await expect.poll(() => modal.count()).toBe(0);

  // The modal's 'Forgot Password?' closes it and opens the forgot-password popup.
  await page.getByRole('button', { name: 'Change Password' }).click();
  await modal.getByRole('button', { name: 'Forgot Password?' }).click();
  await page.getByRole('dialog', { name: 'Forgot Password' }).waitFor();
  await expect(modal.count()).resolves.toBe(0);
  await page.keyboard.press('Escape');

  await logoutWithMenu(page, setup.server.base);
  await loginWithPopup(page, setup.server.base, account.email, 'difference-1');
});
