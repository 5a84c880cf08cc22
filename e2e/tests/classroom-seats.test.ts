import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ARTIFACTS } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { decodeQuotedPrintable, startInbox, type Inbox } from '../inbox';
import { classroomKit } from './classroom-helpers';
import { api, preferTransport } from './connect-helpers';

/**
 * Seats an instructor manages one by one (issue 22.3), in Chromium against the real server and LXD desktops: End
 * session disconnects the student sitting at a machine (after asking) and the student's tab says the instructor
 * ended it; Reset brings a seat's machine back to a fresh desktop.
 */

let inbox: Inbox;
beforeAll(async () => {
  inbox = await startInbox(decodeQuotedPrintable);
});
afterAll(async () => {
  await inbox?.close();
});
const t = useServerAndBrowser(() => ({ SMTP_URL: inbox.url }));
let kit: ReturnType<typeof classroomKit>;
beforeAll(() => {
  kit = classroomKit(t.server, t.browser, inbox);
});

const snapView = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

it("End session disconnects the student at a seat and tells them; Reset gives the seat's machine a fresh desktop", { timeout: 600_000 }, async () => {
  const { teacher, token, packId } = await kit.runningCourse('Sam Seats', 1);
  const student = await kit.verifiedStudent('Sid Student', token, packId);
  await preferTransport(student.page.context(), 'vnc');
  const card = teacher.getByRole('article');
  await card.getByRole('button', { name: 'Start All' }).click();
  const seats = card.getByRole('region', { name: /^Machines of / });
  await seats.getByText('Online', { exact: true }).waitFor({ timeout: 180_000 });

  // The student connects from their dashboard; the instructor's seat list shows them at the machine.
  await student.page.goto(`${t.server.base}/dashboard`);
  const connect = student.page.getByRole('article').getByRole('button', { name: 'Connect' });
  await expect.poll(() => connect.getAttribute('aria-disabled'), { timeout: 60_000 }).toBeNull();
  const [tab] = await Promise.all([student.page.context().waitForEvent('page'), connect.click()]);
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 180_000 });
  const row = seats.locator('tbody tr', { hasText: student.account.email });
  await row.waitFor({ timeout: 30_000 });

  // End session asks first; Cancel ends nothing.
  await row.getByRole('button', { name: `End the session of ${student.account.email}` }).click();
  const confirm = teacher.getByRole('dialog', { name: 'End this session?' });
  await confirm.getByText(`${student.account.email} is disconnected from`, { exact: false }).waitFor();
  await snapView(teacher, 'seats-01-end-confirm');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await confirm.waitFor({ state: 'detached' });
  expect(await tab.locator('main').getAttribute('data-phase')).toBe('connected');

  // Confirmed: the student's tab says why within seconds, and the seat is free.
  await row.getByRole('button', { name: `End the session of ${student.account.email}` }).click();
  await confirm.getByRole('button', { name: 'End session' }).click();
  await tab.getByRole('heading', { name: 'Your session was ended' }).waitFor({ timeout: 30_000 });
  await tab.getByText('Your instructor ended your session.', { exact: false }).waitFor();
  await snapView(tab, 'seats-02-student-told');
  await seats.locator('tbody tr', { hasText: 'Free' }).waitFor({ timeout: 30_000 });
  const { balance } = await api(t.server.base, 'GET', '/v1/user/wallet/balance', token);
  const seat = balance[0].seats[0];
  expect(seat.student).toBeNull();

  // Reset: the dialog names the machine; the machine restarts from the image and comes back online.
  await seats.getByRole('button', { name: `Reset ${seat.machineName}` }).click();
  const reset = teacher.getByRole('dialog', { name: 'Reset machine?' });
  await reset.getByText(`${seat.machineName} goes back to a fresh desktop`, { exact: false }).waitFor();
  await snapView(teacher, 'seats-03-reset-dialog');
  const resetCall = teacher.waitForResponse((r) => r.url().endsWith('/v1/user/slot/reset'));
  await reset.getByRole('button', { name: 'Reset machine' }).click();
  expect((await resetCall).status()).toBe(200);
  await reset.waitFor({ state: 'detached' });
  const seatStatus = async () => (await api(t.server.base, 'GET', '/v1/user/wallet/balance', token)).balance[0].seats[0].instanceStatus;
  await expect.poll(seatStatus, { timeout: 120_000, interval: 250 }).not.toBe('online');
  await expect.poll(seatStatus, { timeout: 240_000 }).toBe('online');
  expect((await api(t.server.base, 'GET', '/v1/user/wallet/balance', token)).balance[0].stopReason).toBeNull();
  await seats.getByText('Online', { exact: true }).waitFor({ timeout: 30_000 });
});
