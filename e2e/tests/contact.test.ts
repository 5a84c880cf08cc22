import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { ARTIFACTS, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { loginWithPopup, seedUser, solveCaptcha } from './auth-helpers';
import { decodeQuotedPrintable, startInbox, type Inbox, type ReceivedMail } from '../inbox';

const CONTACT_TO = 'sales-desk@example.org';
const SUPPORT_TO = 'help-desk@example.org';
const AXE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/axe-core/axe.min.js');

let inbox: Inbox;

beforeAll(async () => {
  inbox = await startInbox(decodeQuotedPrintable);
});
afterAll(async () => {
  await inbox?.close();
});
const t = useServerAndBrowser(() => ({ SMTP_URL: inbox.url, CONTACT_TO, SUPPORT_TO }));

/** Screenshot of what the visitor sees (the popup over the page), under test-results/. */
async function snap(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

async function newPage(width = 1440): Promise<Page> {
  const context = await t.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
  return context.newPage();
}

/** The mail that reached the SMTP server and mentions `marker` (waits for the delivery). */
async function mailWith(marker: string): Promise<ReceivedMail> {
  await expect.poll(() => inbox.mails.some((m) => m.raw.includes(marker)), { timeout: 30_000, interval: 250 }).toBe(true);
  return inbox.mails.find((m) => m.raw.includes(marker))!;
}

/** Text of the error message tied to a field through aria-describedby. */
async function fieldError(field: Locator): Promise<string | null> {
  return field.evaluate((el) => {
    const id = el.getAttribute('aria-describedby');
    return id ? (document.getElementById(id)?.textContent ?? null) : null;
  });
}

async function openContactUs(page: Page): Promise<Locator> {
  await page.getByRole('banner').getByRole('button', { name: 'Contact Us', exact: true }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Contact Us' });
  await dialog.waitFor({ timeout: 15_000 });
  return dialog;
}

async function fill(dialog: Locator, v: { name?: string; email?: string; query: string }) {
  if (v.name !== undefined) await dialog.getByLabel('Name', { exact: true }).fill(v.name);
  if (v.email !== undefined) await dialog.getByLabel('Email', { exact: true }).fill(v.email);
  await dialog.getByLabel('Query', { exact: true }).fill(v.query);
}

const submit = (dialog: Locator) => dialog.getByRole('button', { name: 'Submit', exact: true }).click();

describe('Contact Us and Contact Support popups', () => {
  it('validates every field and the captcha, then delivers to CONTACT_TO', async () => {
    const page = await newPage(1440);
    await page.goto(t.server.base + '/');
    const dialog = await openContactUs(page);
    await submit(dialog);
    const name = dialog.getByLabel('Name', { exact: true });
    const email = dialog.getByLabel('Email', { exact: true });
    const query = dialog.getByLabel('Query', { exact: true });
    for (const field of [name, email, query]) {
      expect(await fieldError(field)).toBe('This field is required');
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
    }
    await dialog.getByText('captcha verification is required', { exact: true }).waitFor();
    await expect(name.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await snap(page, 'contact-required-1440');

    const address = uniqueEmail('visitor');
    await fill(dialog, { name: 'Ada <b>Lovelace</b>', email: address, query: 'Do you offer <i>student</i> pricing? ref-contact-1' });
    expect(await fieldError(name)).toBeNull();
    await submit(dialog);
    await dialog.getByText('captcha verification is required', { exact: true }).waitFor();
    await solveCaptcha(dialog);
    await expect(dialog.getByText('captcha verification is required', { exact: true }).count()).resolves.toBe(0);
    await submit(dialog);
    await dialog.getByText(`Thanks! We'll get in touch with you on ${address} soon.`, { exact: true }).waitFor({ timeout: 15_000 });
    await snap(page, 'contact-success-1440');

    const mail = await mailWith('ref-contact-1');
    expect(mail.to).toEqual([CONTACT_TO]);
    expect(mail.raw).toContain(address);
    expect(mail.raw).toContain('&lt;i&gt;student&lt;/i&gt;');
    expect(inbox.mails.filter((m) => m.raw.includes('ref-contact-1') && m.to.includes(SUPPORT_TO))).toHaveLength(0);

    await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();
    await dialog.waitFor({ state: 'hidden' });
  });

  it('sends Contact Support from the FAQ page to SUPPORT_TO', async () => {
    const page = await newPage(375);
    await page.goto(t.server.base + '/faqs');
    await page.getByRole('button', { name: 'Contact Support', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Contact Support' });
    await dialog.waitFor({ timeout: 15_000 });
    await snap(page, 'contact-support-375');
    const address = uniqueEmail('learner');
    await fill(dialog, { name: 'Lin', email: address, query: 'My machine stays in processing. ref-support-1' });
    await solveCaptcha(dialog);
    await submit(dialog);
    await dialog.getByText(`Thanks! We'll get in touch with you on ${address} soon.`, { exact: true }).waitFor({ timeout: 15_000 });
    const mail = await mailWith('ref-support-1');
    expect(mail.to).toEqual([SUPPORT_TO]);
  });

  it("shows the server's message when the form is refused", async () => {
    const page = await newPage(1440);
    await page.goto(t.server.base + '/about');
    await page.getByRole('contentinfo').getByRole('button', { name: 'Contact Us', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Contact Us' });
    await dialog.waitFor({ timeout: 15_000 });
    await fill(dialog, { name: 'Typo', email: 'not-an-address', query: 'ref-refused-1' });
    await solveCaptcha(dialog);
    await submit(dialog);
    await dialog.getByText('Please enter a valid e-mail address.', { exact: true }).waitFor({ timeout: 15_000 });
    await snap(page, 'contact-refused-1440');
    // A refused form asks for a fresh captcha (each solution is accepted once).
    await dialog.getByRole('checkbox', { name: "I'm not a robot" }).waitFor();
    await expect(dialog.getByRole('checkbox', { name: "I'm not a robot" }).isChecked()).resolves.toBe(false);
  });

  it('shows the network-failure text when the request fails', async () => {
    const page = await newPage(375);
    await page.goto(t.server.base + '/');
    await page.route('**/v1/contact', (route) => route.abort('failed'));
    await page.getByRole('banner').getByRole('button', { name: 'Open menu' }).click();
    const dialog = await openContactUs(page);
    await fill(dialog, { name: 'Offline', email: uniqueEmail('offline'), query: 'ref-offline-1' });
    await solveCaptcha(dialog);
    await submit(dialog);
    await dialog.getByText('There was an error while submitting your form', { exact: true }).waitFor({ timeout: 15_000 });
    await snap(page, 'contact-network-failure-375');
    expect(inbox.mails.some((m) => m.raw.includes('ref-offline-1'))).toBe(false);
  });

  it('is keyboard-operable, traps focus and has no serious axe violations', async () => {
    const page = await newPage(1440);
    await page.goto(t.server.base + '/');
    const opener = page.getByRole('banner').getByRole('button', { name: 'Contact Us', exact: true }).first();
    await opener.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Contact Us' });
    await dialog.waitFor({ timeout: 15_000 });
    await dialog.getByRole('checkbox', { name: "I'm not a robot" }).waitFor({ timeout: 15_000 });
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
    }
    await page.addScriptTag({ path: AXE });
    const serious = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(ctx: Element): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
      // Measure the settled page: a dialog still fading in reads as low contrast (infinite spinners excluded).
      await Promise.all(document.getAnimations().filter((a) => a.effect?.getComputedTiming().iterations !== Infinity).map((a) => a.finished.catch(() => undefined)));
      const res = await axe.run(document.querySelector('[role="dialog"]')!);
      return res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
    });
    expect(serious).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    // Focus goes back to the button that opened the popup.
    await expect.poll(() => opener.evaluate((el) => el === document.activeElement), { timeout: 5_000 }).toBe(true);
  });

  it('hides name and e-mail for a signed-in user and sends the account’s', async () => {
    const account = { name: 'Grace Hopper', email: uniqueEmail('grace'), password: 'compiler42' };
    await seedUser(t.server.base, account);
    const page = await newPage(1440);
    await loginWithPopup(page, t.server.base, account.email, account.password);
    await page.goto(t.server.base + '/');
    const dialog = await openContactUs(page);
    await dialog.getByLabel('Query', { exact: true }).waitFor();
    await expect(dialog.getByLabel('Name', { exact: true }).count()).resolves.toBe(0);
    await expect(dialog.getByLabel('Email', { exact: true }).count()).resolves.toBe(0);
    await snap(page, 'contact-signed-in-1440');
    await fill(dialog, { query: 'Can I move my machine to Spain? ref-signed-in-1' });
    await solveCaptcha(dialog);
    await submit(dialog);
    await dialog.getByText(`Thanks! We'll get in touch with you on ${account.email} soon.`, { exact: true }).waitFor({ timeout: 15_000 });
    const mail = await mailWith('ref-signed-in-1');
    expect(mail.to).toEqual([CONTACT_TO]);
    expect(mail.raw).toContain('Grace Hopper');
    expect(mail.raw).toContain(account.email);
  });
});
