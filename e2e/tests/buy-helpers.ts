import { expect } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { uniqueEmail } from '../harness';
import { loginWithPopup, seedUser, type Account } from './auth-helpers';

/** Shared steps of the buying and dashboard browser tests (buy*.test.ts, dashboard*.test.ts). */

export const PAYING_CARD = '4242 4242 4242 4242';
export const DECLINED_CARD = '4000 0000 0000 0002';

/** A fresh user, signed in through the Login popup, on /dashboard. */
export async function signedInPage(browser: Browser, base: string, name = 'Grace Hopper'): Promise<{ page: Page; account: Account }> {
  const account = { name, email: uniqueEmail('buyer'), password: 'compiler42' };
  await seedUser(base, account);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await loginWithPopup(page, base, account.email, account.password);
  return { page, account };
}

/** The open step's heading locator, by its visible title. */
export function step(page: Page, title: string) {
  return page.locator('section', { has: page.getByRole('heading', { name: title }) });
}

/** Goes through the four setup steps with the given choices and stops in front of the Pay button. */
export async function configure(page: Page, base: string, countryLabel: string, hours: number): Promise<void> {
  await page.goto(`${base}/setup`);
  await page.getByLabel('Country', { exact: true }).selectOption({ label: countryLabel });
  await page.getByRole('button', { name: 'Confirm Country' }).click();
  await page.getByRole('radio', { name: /Unreal Engine/ }).check();
  await page.getByRole('button', { name: 'Confirm Platform' }).click();
  await page.getByRole('radio', { name: `${hours} hours` }).check();
  await page.getByRole('button', { name: 'Confirm Runtime' }).click();
  await page.getByRole('button', { name: /^Pay .+ and get started$/ }).waitFor();
}

/** Fills the built-in hosted checkout page and presses its Pay button. */
export async function payOnCheckout(page: Page, card: string): Promise<void> {
  await page.waitForURL(/\/checkout\//, { timeout: 20_000 });
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel(/Expiry/).fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByLabel(/Name on card/).fill('Grace Hopper');
  await page.getByRole('button', { name: /^Pay / }).click();
}

/** Buys `hours` in `country` through setup and the hosted checkout; ends on /success with the order loaded. */
export async function buyHours(page: Page, base: string, countryLabel: string, hours: number): Promise<void> {
  await configure(page, base, countryLabel, hours);
  await page.getByRole('button', { name: /^Pay .+ and get started$/ }).click();
  await payOnCheckout(page, PAYING_CARD);
  await page.waitForURL(/\/success\?orderId=/, { timeout: 20_000 });
  await expect.poll(() => page.getByText('Successful', { exact: true }).isVisible(), { timeout: 30_000 }).toBe(true);
}
