import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { downloadedBytes, freePort, operatorCli, snap, uniqueEmail } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { openConsole } from './operator-helpers';
import { loginWithPopup, seedUser, seriousViolations } from './auth-helpers';

/**
 * Issue 23: the console's outgoing mail and audit pages in Chromium. A password reset to an address the SMTP relay
 * refuses for good shows as failed with the relay's reason and the reset link; once the relay takes the address, the
 * operator resends it and the row turns sent. The Audit page shows the resend and the CLI's grant (actor `CLI` and
 * the OS user), filters them and exports the filtered entries as CSV.
 */

/** A loopback SMTP relay that refuses the addresses in `refuse` with 550 and keeps what it accepts. */
async function startRelay() {
  const refuse = new Set<string>();
  const received: string[][] = [];
  const smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!refuse.has(address.address)) return callback();
      callback(Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: no such mailbox`), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push(session.envelope.rcptTo.map((r) => r.address));
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${port}`, refuse, received, close: () => new Promise<void>((r) => smtp.close(() => r())) };
}

let relay: Awaited<ReturnType<typeof startRelay>>;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay?.close();
});
const t = useServerAndBrowser(() => ({ SMTP_URL: relay.url, MAIL_FROM: 'Hyperdesk <no-reply@desk.test>' }));

/** `npm run admin -- grant <email> admin`, run beside the running server (the CLI finds it through DATA_DIR). */
async function grantAdmin(email: string): Promise<void> {
  expect(await operatorCli(t.server, 'grant', email, 'admin')).toContain('now has the admin claim');
}

async function openSection(page: Page, name: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 2, name: heading }).waitFor({ timeout: 15_000 });
}

it('a failed mail shows its reason and links in the console, is resent, and the resend and a CLI grant show in the audit log', async () => {
  const operator = { name: 'Olga Operator', email: uniqueEmail('operator'), password: 'console-2026' };
  await seedUser(t.server.base, operator);
  await grantAdmin(operator.email);

  // A user whose mailbox the relay does not know (yet) asks for a password reset.
  const bob = { name: 'Bounced Bob', email: uniqueEmail('bounced'), password: 'bounced-123' };
  await seedUser(t.server.base, bob);
  relay.refuse.add(bob.email);
  expect((await fetch(`${t.server.base}/v1/auth/forgot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: bob.email }) })).status).toBe(200);

  const context = await t.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true, acceptDownloads: true });
  const page = await context.newPage();
  await loginWithPopup(page, t.server.base, operator.email, operator.password);
  await openConsole(page, t.server.base); // enrols the operator's authenticator first (issue 23.2)

  // Mail: the failed reset with the relay's reason and the reset link.
  await openSection(page, 'Mail', 'Outgoing mail');
  await page.getByLabel('State').selectOption({ label: 'Failed' });
  // Bob's sign-up verification mail bounced too; this is about the reset.
  const row = page.getByRole('row', { name: new RegExp(bob.email) }).filter({ hasText: 'password-reset' });
  await row.filter({ hasText: 'failed' }).waitFor({ timeout: 30_000 });
  const text = await row.innerText();
  expect(text).toContain('password-reset');
  expect(text).toMatch(/Reason: .*550.*no such mailbox/);
  expect(await row.getByRole('list', { name: 'Links in the mail' }).innerText()).toMatch(new RegExp(`^${t.server.base.replace(/[.:/]/g, '\\$&')}/reset-password\\?token=[\\w-]+$`));
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'admin-mail-failed');

  // The relay now takes the address: Resend, and the row turns sent.
  relay.refuse.delete(bob.email);
  await row.getByRole('button', { name: 'Resend' }).click();
  await page.getByRole('status').filter({ hasText: `Mail to ${bob.email} queued again.` }).waitFor({ timeout: 15_000 });
  await page.getByLabel('State').selectOption({ label: 'All mail' });
  const sentRow = page.getByRole('row', { name: new RegExp(bob.email) }).filter({ hasText: 'password-reset' }).filter({ has: page.getByText('sent', { exact: true }) });
  await sentRow.waitFor({ timeout: 30_000 });
  expect(await sentRow.innerText()).toContain('resent 1×');
  expect(relay.received.filter((to) => to.includes(bob.email))).toHaveLength(1); // the reset, once
  await snap(page, 'admin-mail-resent');

  // Audit: the resend by this operator, and the CLI's grant with the OS user who ran it.
  await openSection(page, 'Audit', 'Audit log');
  const filters = page.getByRole('search', { name: 'Filter the audit log' });
  await filters.getByLabel('Action').fill('mail.resend');
  await filters.getByRole('button', { name: 'Filter' }).click();
  const resendRow = page.getByRole('row', { name: /mail\.resend/ });
  await resendRow.waitFor({ timeout: 15_000 });
  expect(await page.getByRole('row', { name: /user\.claim/ }).count()).toBe(0);
  expect(await resendRow.innerText()).toContain(operator.email);
  expect(await resendRow.innerText()).toMatch(/"state": "failed"/);

  await filters.getByLabel('Action').fill('');
  await filters.getByLabel('Actor').fill('cli');
  await filters.getByLabel('Target').fill(operator.email);
  await filters.getByRole('button', { name: 'Filter' }).click();
  const cliRow = page.getByRole('row', { name: /user\.claim\.admin\.grant/ });
  await cliRow.waitFor({ timeout: 15_000 });
  expect(await page.getByRole('row', { name: /mail\.resend/ }).count()).toBe(0);
  expect(await cliRow.innerText()).toMatch(/CLI\s+OS user \S+/);
  expect(await seriousViolations(page)).toEqual([]);
  await snap(page, 'admin-audit-filtered');

  // Export: the CSV of exactly the filtered entries.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export these entries (CSV)' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^hyperdesk-audit-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = (await downloadedBytes(download)).toString('utf8').trim().split('\r\n');
  expect(csv[0]).toBe('id,at,actor_kind,actor,action,target_type,target_id,before,after');
  expect(csv).toHaveLength(2);
  expect(csv[1]).toMatch(/^\d+,[^,]+,cli,cli:[^,]+,user\.claim\.admin\.grant,user,[0-9a-f-]{36},/);
  await page.getByRole('status').filter({ hasText: /^Saved hyperdesk-audit-/ }).waitFor();
});
