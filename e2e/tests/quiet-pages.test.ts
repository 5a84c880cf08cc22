import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { snap, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { header, loginWithPopup, seedUser } from './auth-helpers';
import { api } from './connect-helpers';

/**
 * Issue 23: a signed-out visitor's page loads are quiet and correct: no /v1/auth/refresh call (there is no session
 * to refresh), no 404 (the favicon, also on the server's own checkout page), and a signed-in reload still restores
 * the session.
 */

const PUBLIC = ['/', '/HyperRender', '/SwiftShader', '/faqs', '/terms', '/privacy', '/refund-policy', '/about'];

const t = useServerAndBrowser();

/** A page in a fresh context that records every refresh call and every answer of 400 or more (favicons included). */
async function watchedPage(): Promise<{ page: Page; refreshes: number[]; failures: string[] }> {
  const context = await t.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const refreshes: number[] = [];
  const failures: string[] = [];
  // Context-wide: favicon requests are made by the browser, not the page, and reach only the context's listeners.
  context.on('response', (res) => {
    const url = new URL(res.url());
    if (url.pathname === '/v1/auth/refresh') refreshes.push(res.status());
    if (res.status() >= 400) failures.push(`${res.status()} ${url.pathname}`);
  });
  return { page, refreshes, failures };
}

/** Loads a route and waits until the app has decided the visitor is signed out (the header offers Login). */
async function visitSignedOut(page: Page, route: string): Promise<void> {
  await page.goto(t.server.base + route);
  await header(page).getByRole('button', { name: 'Login', exact: true }).waitFor({ timeout: 20_000 });
  await page.waitForLoadState('networkidle');
}

/** The favicon a page declares, fetched the way the browser does (its URL resolved against the page). */
async function declaredIcon(page: Page): Promise<{ href: string; status: number; type: string | null }> {
  const href = await page.evaluate(() => (document.querySelector('link[rel~="icon"]') as HTMLLinkElement | null)?.href ?? `${location.origin}/favicon.ico`);
  const res = await fetch(href);
  return { href, status: res.status, type: res.headers.get('content-type') };
}

it('a signed-out walk through the public pages and the checkout page makes no refresh call and meets no 404', async () => {
  // An order made over the API by a buyer elsewhere: its hosted checkout page is opened signed out.
  const buyer = { name: 'Quiet Buyer', email: uniqueEmail('quiet'), password: 'quiet-pages-1' };
  await seedUser(t.server.base, buyer);
  const { accessToken } = await api(t.server.base, 'POST', '/v1/auth/login', undefined, { email: buyer.email, password: buyer.password });
  const { url: checkoutUrl } = await api(t.server.base, 'POST', '/v1/user/wallet/recharge', accessToken, {
    packId: 'uk-unreal-10h',
    success_url: `${t.server.base}/success`,
    cancel_url: `${t.server.base}/failed`,
  });

  const { page, refreshes, failures } = await watchedPage();
  for (const route of PUBLIC) {
    await visitSignedOut(page, route);
    const icon = await declaredIcon(page);
    expect(icon.status, `${route} declares ${icon.href}`).toBe(200);
  }
  // A signed-in-only route sends the visitor to / without asking for a session first.
  await page.goto(`${t.server.base}/dashboard`);
  await page.waitForURL(`${t.server.base}/`, { timeout: 20_000 });
  await header(page).getByRole('button', { name: 'Login', exact: true }).waitFor({ timeout: 20_000 });

  // The server's own page: no script, but the browser asks for its icon.
  await page.goto(checkoutUrl);
  await page.getByRole('heading', { name: 'Pay with card' }).waitFor({ timeout: 20_000 });
  await page.waitForLoadState('networkidle');
  const icon = await declaredIcon(page);
  expect(icon).toMatchObject({ status: 200, type: 'image/x-icon' });
  const direct = await fetch(`${t.server.base}/favicon.ico`);
  expect(direct.status).toBe(200);
  expect(Buffer.from(await direct.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0])); // an ICO header
  await snap(page, 'quiet-checkout');

  expect(refreshes).toEqual([]);
  expect(failures).toEqual([]);
});

it('a signed-in reload restores the session with one refresh; after logout the pages are quiet again', async () => {
  const account = { name: 'Reload Reader', email: uniqueEmail('reload'), password: 'quiet-pages-2' };
  await seedUser(t.server.base, account);
  const { page, refreshes, failures } = await watchedPage();
  await loginWithPopup(page, t.server.base, account.email, account.password);
  expect(refreshes).toEqual([]);

  await page.reload();
  await header(page).getByRole('button', { name: /^Account menu/ }).waitFor({ timeout: 20_000 });
  expect(refreshes).toEqual([200]);

  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await page.waitForURL(`${t.server.base}/`, { timeout: 20_000 });
  for (const route of ['/', '/faqs', '/dashboard']) {
    await page.goto(t.server.base + route);
    await page.waitForURL(`${t.server.base}${route === '/dashboard' ? '/' : route}`, { timeout: 20_000 });
    await header(page).getByRole('button', { name: 'Login', exact: true }).waitFor({ timeout: 20_000 });
    await page.waitForLoadState('networkidle');
  }
  expect(refreshes).toEqual([200]);
  expect(failures).toEqual([]);
});
