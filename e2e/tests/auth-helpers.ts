import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { solveChallenge } from 'altcha-lib/v1';
import { launchBrowser, startServer, type RunningServer } from '../harness';
import { startInbox, type Inbox } from '../inbox';

const AXE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/axe-core/axe.min.js');

/** axe-core violations of impact serious or critical (needs a context created with bypassCSP to inject axe). */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    type Result = { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
    const axe = (window as unknown as { axe: { run(ctx: Document): Promise<Result> } }).axe;
    // Measure the settled page: a dialog still fading in reads as low contrast (infinite spinners excluded).
    await Promise.all(document.getAnimations().filter((a) => a.effect?.getComputedTiming().iterations !== Infinity).map((a) => a.finished.catch(() => undefined)));
    return (await axe.run(document)).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Shared steps of the account browser tests (auth*.test.ts). */

export interface Account {
  name: string;
  email: string;
  password: string;
}

/** A solved ALTCHA payload for one form (solved in Node, as the widget would). */
export async function solvedCaptcha(base: string): Promise<string> {
  const ch = (await (await fetch(`${base}/v1/captcha/challenge`)).json()) as {
    algorithm: string;
    challenge: string;
    maxnumber: number;
    salt: string;
    signature: string;
  };
  const solution = await solveChallenge(ch.challenge, ch.salt, ch.algorithm, ch.maxnumber).promise;
  if (!solution) throw new Error('captcha challenge could not be solved');
  const captcha = Buffer.from(
    JSON.stringify({ algorithm: ch.algorithm, challenge: ch.challenge, number: solution.number, salt: ch.salt, signature: ch.signature }),
  ).toString('base64');
  return captcha;
}

/** Seeds a user through the real sign-up call, solving the server's ALTCHA challenge in Node. */
export async function seedUser(base: string, account: Account): Promise<void> {
  const captcha = await solvedCaptcha(base);
  const res = await fetch(`${base}/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...account, confirmPassword: account.password, captcha }),
  });
  if (res.status !== 201) throw new Error(`seed sign-up failed: ${res.status} ${await res.text()}`);
}

export function header(page: Page): Locator {
  return page.getByRole('banner');
}

/** Opens a popup from the header (Login or Sign Up) and answers the dialog. */
export async function openFromHeader(page: Page, name: 'Login' | 'Sign Up'): Promise<Locator> {
  await header(page).getByRole('button', { name, exact: true }).click();
  const dialog = page.getByRole('dialog', { name });
  // The popup's code loads on demand; on a loaded machine that takes longer than expect.poll's default 5 s.
  await expect.poll(() => dialog.isVisible(), { timeout: 15_000 }).toBe(true);
  return dialog;
}

/** Ticks the ALTCHA checkbox and waits until the browser's worker has solved the proof of work. */
export async function solveCaptcha(dialog: Locator): Promise<void> {
  const box = dialog.getByRole('checkbox', { name: "I'm not a robot" });
  await box.waitFor({ state: 'visible', timeout: 15_000 });
  await box.click();
  await dialog.getByText('Verified', { exact: true }).waitFor({ timeout: 30_000 });
}

/** The initials shown in the header's avatar (the user menu button). */
export function avatarText(page: Page): Promise<string> {
  return header(page).getByRole('button', { name: /^Account menu/ }).locator('[data-initials]').innerText();
}

export async function alertText(scope: Locator): Promise<string> {
  const alert = scope.getByRole('alert');
  await alert.waitFor({ timeout: 10_000 });
  return (await alert.innerText()).trim();
}

export async function loginWithPopup(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/`);
  const dialog = await openFromHeader(page, 'Login');
  await dialog.getByLabel('Email', { exact: true }).fill(email);
  await dialog.getByLabel('Password', { exact: true }).fill(password);
  await dialog.getByRole('button', { name: 'Login', exact: true }).click();
  await page.waitForURL(`${base}/dashboard`, { timeout: 15_000 });
}

export async function logoutWithMenu(page: Page, base: string): Promise<void> {
  await header(page).getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Logout' }).click();
  await page.waitForURL(`${base}/`, { timeout: 15_000 });
  await header(page).getByRole('button', { name: 'Login', exact: true }).waitFor({ timeout: 10_000 });
}

/**
 * The latest link to `path` (e.g. '/verify-email') in the mails `inbox` received for `email`, waiting for it to
 * arrive; quoted-printable soft breaks and =3D undone. Pass `after` to skip mails already seen.
 */
export async function mailedLink(inbox: { mails: { to: string[]; raw: string }[] }, email: string, path: string, after = 0): Promise<string> {
  let link: string | undefined;
  const pattern = new RegExp(`https?://[^\\s"<>]+${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\?token=[A-Za-z0-9_-]+`);
  await expect
    .poll(
      () => {
        const mails = inbox.mails.filter((m) => m.to.includes(email)).slice(after);
        const texts = mails.map((m) => m.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='));
        link = texts.map((t) => t.match(pattern)?.[0]).filter(Boolean).at(-1);
        return link;
      },
      { timeout: 30_000, interval: 250 },
    )
    .toBeTruthy();
  return link!;
}

/**
 * The setup of a browser test that reads mail: a local SMTP inbox, a server that mails to it and Chromium, started
 * before the file's tests and closed after them, with every context opened through `newContext`. Call at top level.
 */
export function withMailServer() {
  let inbox: Inbox;
  let server: RunningServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    inbox = await startInbox();
    [server, browser] = await Promise.all([startServer({ SMTP_URL: inbox.url }), launchBrowser()]);
  });
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await server?.close();
    await inbox?.close();
  });
  return {
    get inbox() {
      return inbox;
    },
    get server() {
      return server;
    },
    /** A 1280×800 context unless `options` say otherwise; closed after the file's tests. */
    async newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
      contexts.push(context);
      return context;
    },
  };
}
