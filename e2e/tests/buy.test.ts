import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import {
  configure,
  DECLINED_CARD,
  PAYING_CARD,
  payOnCheckout,
  signedInPage,
  step,
} from './buy-helpers';

const t = useServerAndBrowser();

const summary = (page: Page) => page.getByRole('region', { name: 'Summary' });
const alertIn = async (page: Page, title: string) => (await step(page, title).getByRole('alert').innerText()).trim();

it('buys hours: every setup step with its Change links and messages, the hosted checkout, /success, the dashboard', async () => {
  const { page } = await signedInPage(t.browser, t.server.base);
  await page.getByText('Set up your Cloud Machine to get started').waitFor();
  await snap(page, 'buy-01-dashboard-empty');
  await page.getByRole('link', { name: 'Configure your Set up' }).click();
  await page.waitForURL(`${t.server.base}/setup`);

  await page.getByRole('heading', { level: 1, name: "Let's set up your Cloud Machine" }).waitFor();
  await expect.poll(() => summary(page).innerText()).toContain('All your selections will be shown here');
  expect(await page.getByRole('button', { name: 'Confirm Platform' }).count()).toBe(0);
  await snap(page, 'buy-02-setup-start');

  // Step 1: country.
  await page.getByRole('button', { name: 'Confirm Country' }).click();
  expect(await alertIn(page, 'Choose Your Country')).toBe('This field is required');
  await page.getByLabel('Country', { exact: true }).selectOption({ label: 'United Kingdom' });
  expect(await step(page, 'Choose Your Country').getByRole('alert').count()).toBe(0);
  await page.getByRole('button', { name: 'Confirm Country' }).click();
  // The step that opens takes the keyboard focus (the pressed button is gone).
  await expect.poll(() => page.evaluate(() => document.activeElement?.textContent ?? '')).toContain('Choose your Development Platform');

  // Step 2: platform (Unity is shown but not selectable for individuals).
  await page.getByRole('button', { name: 'Confirm Platform' }).click();
  expect(await alertIn(page, 'Choose your Development Platform')).toBe('Please select the platform');
  expect(await page.getByRole('radio', { name: /Unity Engine/ }).isDisabled()).toBe(true);
  const unreal = page.getByRole('radio', { name: /Unreal Engine/ });
  for (const spec of ['CPU', 'CPU Cores', 'RAM', 'GPU', 'GPU RAM', 'Intel Xeon E5-2670', 'Nvidia T4', '16 GB']) {
    expect(await step(page, 'Choose your Development Platform').innerText()).toContain(spec);
  }
  await snap(page, 'buy-03-setup-platform-error');
  await unreal.check();
  await page.getByRole('button', { name: 'Confirm Platform' }).click();

  // Step 3: runtime, hours only.
  const runtime = step(page, 'Choose your Runtime');
  await page.getByRole('radio', { name: '10 hours' }).waitFor();
  expect(await runtime.getByRole('radio').count()).toBe(4);
  for (const h of [10, 25, 50, 100]) expect(await runtime.getByRole('radio', { name: `${h} hours`, exact: true }).count()).toBe(1);
  expect(await runtime.innerText()).not.toMatch(/£/);
  expect(await runtime.innerText()).toContain('You can top up anytime in case you run out.');
  await page.getByRole('button', { name: 'Confirm Runtime' }).click();
  expect(await alertIn(page, 'Choose your Runtime')).toBe('Please select the package');
  await snap(page, 'buy-04-setup-runtime-error');
  await page.getByRole('radio', { name: '10 hours' }).check();
  await page.getByRole('button', { name: 'Confirm Runtime' }).click();
  expect(await runtime.innerText()).toContain('10 hours');
  expect(await runtime.getByRole('radio').count()).toBe(0);

  // Step 4: pay, with the summary complete.
  const pay = page.getByRole('button', { name: 'Pay £ 14.99 and get started' });
  await pay.waitFor();
  expect(await step(page, 'Pay and initiate setup').innerText()).toContain(
    "Your config looks great! Complete your payment and we'll have it up and running for you within 5 mins.",
  );
  const side = await summary(page).innerText();
  for (const t of ['United Kingdom', 'Unreal Engine', 'Intel Xeon E5-2670', 'CPU Cores', 'Nvidia T4', 'GPU RAM', '10 hours', '£ 14.99', 'Secure card payment']) {
    expect(side).toContain(t);
  }
  await snap(page, 'buy-05-setup-pay');

  // Change runtime: the list reopens, the pay step closes until it is confirmed again.
  await page.getByRole('button', { name: 'Change Choose your Runtime' }).click();
  expect(await page.getByRole('button', { name: /and get started$/ }).count()).toBe(0);
  await page.getByRole('radio', { name: '25 hours' }).check();
  await page.getByRole('button', { name: 'Confirm Runtime' }).click();
  await page.getByRole('button', { name: 'Pay £ 34.99 and get started' }).waitFor();

  // Change country: later confirmations and the amount reset; new prices in the new currency.
  await page.getByRole('button', { name: 'Change Choose Your Country' }).click();
  expect(await page.getByRole('button', { name: /and get started$/ }).count()).toBe(0);
  await page.getByLabel('Country', { exact: true }).selectOption({ label: 'India' });
  expect(await summary(page).innerText()).not.toContain('£');
  expect(await summary(page).innerText()).not.toContain('25 hours');
  await page.getByRole('button', { name: 'Confirm Country' }).click();
  await page.getByRole('button', { name: 'Confirm Platform' }).waitFor();
  await page.getByRole('button', { name: 'Confirm Platform' }).click();
  await page.getByRole('button', { name: 'Confirm Runtime' }).click();
  expect(await alertIn(page, 'Choose your Runtime')).toBe('Please select the package');

  // Change platform reopens step 2 and closes the runtime step.
  await page.getByRole('button', { name: 'Change Choose your Development Platform' }).click();
  expect(await page.getByRole('button', { name: 'Confirm Runtime' }).count()).toBe(0);
  await page.getByRole('button', { name: 'Confirm Platform' }).click();
  await page.getByRole('radio', { name: '25 hours' }).check();
  await page.getByRole('button', { name: 'Confirm Runtime' }).click();
  const payInr = page.getByRole('button', { name: 'Pay ₹ 2,799 and get started' });
  await payInr.waitFor();

  // The button gives way to a spinner while the checkout is being opened (held here until it has been seen).
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await page.route('**/v1/user/wallet/recharge', async (route) => {
    await gate;
    await route.continue();
  });
  await payInr.click();
  await step(page, 'Pay and initiate setup').getByRole('status', { name: 'Redirecting to payment' }).waitFor();
  expect(await page.getByRole('button', { name: /and get started$/ }).count()).toBe(0);
  await snap(page, 'buy-06-paying');
  release();
  await page.waitForURL(/\/checkout\//, { timeout: 20_000 });
  const stored = JSON.parse((await page.evaluate(() => localStorage.getItem('hyperdesk.order'))) ?? '{}');
  expect(stored).toMatchObject({ country: 'IN', hours: 25, amount: 2799 });
  expect(stored.payment_url).toBe(page.url());
  await snap(page, 'buy-06b-checkout');
  await payOnCheckout(page, PAYING_CARD);

  await page.waitForURL(/\/success\?orderId=/, { timeout: 20_000 });
  await page.getByRole('heading', { level: 1, name: 'Payment Successful!' }).waitFor();
  await page.getByText('Congratulations, your Cloud Machine is ready for setup!').waitFor();
  await expect.poll(() => page.getByText('Successful', { exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
  const paymentSummary = await page.getByRole('region', { name: 'Payment Summary' }).innerText();
  expect(paymentSummary).toMatch(/Amount\s+₹ 2,799/);
  expect(paymentSummary).toMatch(/Payment Method\s+Visa/);
  expect(paymentSummary).toMatch(/Payment Status\s+Successful/);
  const machine = await page.getByRole('region', { name: 'Your Cloud Machine' }).innerText();
  for (const t of ['India', 'Intel Xeon E5-2670', 'Nvidia T4', '25 hours']) expect(machine).toContain(t);
  expect(await page.getByRole('link', { name: 'help@hyperdesk.io' }).getAttribute('href')).toBe('mailto:help@hyperdesk.io');
  await snap(page, 'buy-07-success');

  await page.getByRole('link', { name: 'Go to Dashboard' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`);
  const card = page.getByRole('article');
  await card.waitFor();
  expect(await card.innerText()).toMatch(/25\s+of 25 hours left/);
  expect(await card.innerText()).toContain('India');
  expect(await card.innerText()).toContain('Offline');
  await snap(page, 'buy-08-dashboard');
  await page.setViewportSize({ width: 390, height: 844 });
  await snap(page, 'buy-08b-dashboard-phone');
  await page.goto(`${t.server.base}/setup`);
  await page.getByRole('button', { name: 'Confirm Country' }).waitFor();
  await snap(page, 'buy-08c-setup-phone');
  await page.context().close();
});

it('a declined card lands on /failed; Retry Payment returns to the same checkout page', async () => {
  const { page } = await signedInPage(t.browser, t.server.base, 'Alan Turing');
  await configure(page, t.server.base, 'Germany', 10);
  await page.getByRole('button', { name: 'Pay € 16.99 and get started' }).click();
  await page.waitForURL(/\/checkout\//, { timeout: 20_000 });
  const checkoutUrl = page.url();
  await payOnCheckout(page, DECLINED_CARD);

  await page.waitForURL(`${t.server.base}/failed**`, { timeout: 20_000 });
  await page.getByRole('heading', { level: 1, name: 'Payment Unsuccessful' }).waitFor();
  await page.getByText("Oops, something went wrong and your payment didn't go through. Please try again.").waitFor();
  const side = await page.getByRole('region', { name: 'Your Cloud Machine' }).innerText();
  for (const t of ['Germany', 'Intel Xeon E5-2670', 'Nvidia T4', '10 hours', '€ 16.99']) expect(side).toContain(t);
  expect(await page.getByRole('link', { name: 'help@hyperdesk.io' }).count()).toBe(1);
  await snap(page, 'buy-09-failed');

  await page.getByRole('button', { name: 'Retry Payment' }).click();
  await page.waitForURL(checkoutUrl, { timeout: 20_000 });
  // The same session can still be paid with another card.
  await payOnCheckout(page, PAYING_CARD);
  await page.waitForURL(/\/success\?orderId=/, { timeout: 20_000 });
  await expect.poll(() => page.getByText('Successful', { exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
  await page.context().close();
});

it('shows the not-available message when the location has no packages', async () => {
  const { page } = await signedInPage(t.browser, t.server.base, 'Edsger Dijkstra');
  // The seeded catalog sells every location; answer this one as the server does for an empty location.
  await page.route('**/v1/packs/location?*', (route) =>
    route.fulfill({
      status: 404,
      contentType: 'application/json',
      body: JSON.stringify({ statusCode: 404, error: 'Not Found', message: 'Packages are not available for the selected location.', reqId: 'x' }),
    }),
  );
  await page.goto(`${t.server.base}/setup`);
  await page.getByLabel('Country', { exact: true }).selectOption({ label: 'Spain' });
  await page.getByRole('button', { name: 'Confirm Country' }).click();
  await page.getByRole('radio', { name: /Unreal Engine/ }).check();
  await page.getByRole('button', { name: 'Confirm Platform' }).click();
  expect(await alertIn(page, 'Choose your Runtime')).toBe('Packages are not available for the selected location.');
  await snap(page, 'buy-10-no-packages');
  await page.context().close();
});
