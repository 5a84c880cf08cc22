import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { header, loginWithPopup, seedUser } from './auth-helpers';

/**
 * Issue 11.7: the avatar's menu must stay open when the page under the header changes. Every page renders its own
 * header, and the router swaps pages in a transition: the old page stays on screen until the new page's code has
 * loaded, so a click on the avatar in that window opened the old header's menu, which vanished with the old page.
 * Here the new page's code is held back deterministically, the avatar clicked, then the code released.
 */

const t = useServerAndBrowser();

async function signedInOnLanding(): Promise<Page> {
  const account = { name: 'Katherine Johnson', email: uniqueEmail('menu'), password: 'orbits-1962' };
  await seedUser(t.server.base, account);
  const context = await t.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await loginWithPopup(page, t.server.base, account.email, account.password);
  // A new document: the dashboard's code is not loaded in it yet.
  await page.goto(`${t.server.base}/`);
  await header(page).getByRole('button', { name: /^Account menu/ }).waitFor();
  return page;
}

/** Holds the requests for a lazily loaded page's script until release() is called. */
async function holdChunk(page: Page, name: string) {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let requested = false;
  await page.route(new RegExp(`/assets/${name}-[^/]*\\.js$`), async (route) => {
    requested = true;
    await held;
    await route.continue();
  });
  return { release, requested: () => requested };
}

it('keeps the user menu open when the avatar is clicked while the next page is still loading', async () => {
  const page = await signedInOnLanding();
  const chunk = await holdChunk(page, 'Dashboard');
  await header(page).getByRole('link', { name: 'Dashboard' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`);
  await expect.poll(chunk.requested, { timeout: 10_000 }).toBe(true);

  // The URL says /dashboard but the landing page (and its header) is still shown: open the menu now.
  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Account Details' }).waitFor({ timeout: 10_000 });

  chunk.release();
  await page.getByRole('heading', { level: 1, name: 'Your Cloud Machines' }).waitFor({ timeout: 15_000 });
  // Same menu, now under the dashboard's header: still open and usable.
  await page.getByRole('menuitem', { name: 'Logout' }).click({ timeout: 5_000 });
  await page.waitForURL(`${t.server.base}/`, { timeout: 15_000 });
  await header(page).getByRole('button', { name: 'Login', exact: true }).waitFor({ timeout: 10_000 });
});
