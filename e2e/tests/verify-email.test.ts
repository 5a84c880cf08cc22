import { expect, it } from 'vitest';
import { snap, uniqueEmail } from '../harness';
import { mailedLink, openFromHeader, seriousViolations, solveCaptcha, withMailServer } from './auth-helpers';

/**
 * E-mail verification (issue 11) in Chromium: sign up, the dashboard's reminder, the link from the mailbox (a real
 * SMTP server on loopback), the verified page, the reminder gone; a used link offers a new one.
 */

const setup = withMailServer();

it('sign up → reminder on the dashboard → resend → open the link → verified → reminder gone; a used link offers a new one', { timeout: 180_000 }, async () => {
  const context = await setup.newContext({ bypassCSP: true });
  const page = await context.newPage();
  await page.goto(`${setup.server.base}/`);
  const email = uniqueEmail('grace');
  const dialog = await openFromHeader(page, 'Sign Up');
  await dialog.getByLabel('Name', { exact: true }).fill('Grace Hopper');
  await dialog.getByLabel('Email', { exact: true }).fill(email);
  await dialog.getByLabel('Password', { exact: true }).fill('cobol-1959');
  await dialog.getByLabel('Re-enter Password', { exact: true }).fill('cobol-1959');
  await solveCaptcha(dialog);
  await dialog.getByRole('button', { name: 'Sign Up', exact: true }).click();
  await page.waitForURL(`${setup.server.base}/welcome`, { timeout: 15_000 });
  const first = await mailedLink(setup.inbox, email, '/verify-email');

  // Single users keep buying as before; the dashboard reminds them gently.
  await page.goto(`${setup.server.base}/dashboard`);
  const banner = page.getByRole('region', { name: 'E-mail verification' });
  await banner.getByText(`Please verify your e-mail address: open the link we sent to ${email}.`).waitFor({ timeout: 20_000 });
  await page.getByText('Set up your Cloud Machine to get started').waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'verify-01-dashboard-reminder');
  const seen = setup.inbox.mails.filter((m) => m.to.includes(email)).length;
  await banner.getByRole('button', { name: 'Resend e-mail' }).click();
  await banner.getByText('E-mail sent. Please check your inbox.').waitFor();
  const resent = await mailedLink(setup.inbox, email, '/verify-email', seen);
  expect(resent).not.toBe(first);

  // A link that does not work (expired, used, mistyped) offers a new one while the address is unverified.
  await page.goto(`${setup.server.base}/verify-email?token=not-a-real-token`);
  await page.getByRole('alert').filter({ hasText: 'This verification link has expired or was already used.' }).waitFor({ timeout: 20_000 });
  await page.getByRole('button', { name: 'Resend e-mail' }).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'verify-02-bad-link');

  // Opened where nobody is signed in (another device, or someone who did not sign up): not verified, not spent.
  const elsewhere = await setup.newContext();
  const other = await elsewhere.newPage();
  await other.goto(resent);
  await other.getByRole('alert').filter({ hasText: 'Please log in to finish verifying your e-mail address, then open this link again.' }).waitFor({ timeout: 20_000 });
  await other.getByRole('main').getByRole('button', { name: 'Login' }).waitFor();
  await snap(other, 'verify-02-login-required');

  await page.goto(resent);
  await page.getByRole('heading', { level: 1, name: 'E-mail address verified' }).waitFor({ timeout: 20_000 });
  await page.getByText(`Thank you: ${email} is verified.`, { exact: false }).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'verify-03-verified');
  await page.getByRole('link', { name: 'Go to Dashboard' }).click();
  await page.waitForURL(`${setup.server.base}/dashboard`);
  await page.getByText('Set up your Cloud Machine to get started').waitFor();
  expect(await banner.count()).toBe(0);

  // Every link worked once at most: the used one and the earlier one (spent by the verification) say so.
  for (const link of [resent, first]) {
    await page.goto(link);
    await page.getByRole('alert').filter({ hasText: 'This verification link has expired or was already used.' }).waitFor({ timeout: 20_000 });
    await page.getByText('Your e-mail address is verified already.').waitFor();
    expect(await page.getByRole('button', { name: 'Resend e-mail' }).count()).toBe(0);
  }
  await snap(page, 'verify-04-used-link');
});
