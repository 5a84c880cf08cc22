import { expect, it } from 'vitest';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { buyHours, signedInPage } from './buy-helpers';

const t = useServerAndBrowser();

/** Longer than a local desktop needs to come up, shorter than the 30 s processing poll: only the push stream can
 *  bring 'Online' to the page within it. */
const PUSH_WINDOW_MS = 25_000;

it('Start Machine → countdown → online by push → Connect tab → Config Details → Reset machine → Stop → offline', async () => {
  const { page } = await signedInPage(t.browser, t.server.base, 'Katherine Johnson');
  const streams: Array<{ idtoken?: string }> = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/user/events')) streams.push({ idtoken: r.headers().idtoken });
  });
  await buyHours(page, t.server.base, 'United Kingdom', 10);
  await page.getByRole('link', { name: 'Go to Dashboard' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`);

  const card = page.getByRole('article');
  await card.waitFor();
  const text = () => card.innerText();
  expect(await text()).toMatch(/10\s+of 10 hours left/);
  expect(await text()).toContain('Offline');
  await expect.poll(() => streams.length).toBeGreaterThan(0);
  expect(streams[0]!.idtoken).toBeTruthy();

  // Config Details popup, closed with Done.
  await card.getByRole('button', { name: 'Config Details' }).click();
  const dialog = page.getByRole('dialog', { name: 'Config Details' });
  await dialog.waitFor();
  const config = await dialog.innerText();
  for (const t of ['Platform', 'Unreal Engine', 'CPU Cores', 'RAM', 'GPU RAM']) expect(config).toContain(t);
  await snap(page, 'dashboard-01-config');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'detached' });

  // Start: processing with the 5-minute countdown; Connect is disabled with its tooltip.
  await card.getByRole('button', { name: 'Start Machine' }).click();
  await card.getByText('Processing', { exact: true }).waitFor({ timeout: 10_000 });
  expect(await card.getByRole('status').innerText()).toMatch(/ready in about 5 minutes/);
  const connect = card.getByRole('button', { name: 'Connect' });
  expect(await connect.getAttribute('aria-disabled')).toBe('true');
  await connect.hover();
  await expect.poll(() => page.getByRole('tooltip').innerText()).toContain('Your machine is starting, please wait');
  await snap(page, 'dashboard-02-processing');

  await card.getByText('Online', { exact: true }).waitFor({ timeout: PUSH_WINDOW_MS });
  expect(await connect.getAttribute('aria-disabled')).toBeNull();
  expect(await card.getByRole('status').count()).toBe(0);
  await snap(page, 'dashboard-03-online');

  // Connect opens the connect tab with the spec's payload in its fragment.
  const [tab] = await Promise.all([page.context().waitForEvent('page'), connect.click()]);
  const hash = new URL(tab.url()).hash.slice(1);
  expect(new URL(tab.url()).pathname).toBe('/connect');
  const payload = JSON.parse(Buffer.from(hash, 'base64').toString('utf8'));
  expect(payload).toMatchObject({ role: 'SINGLE', machineName: expect.any(String), packId: expect.any(String) });
  expect(payload.url).toBe(`/v1/slot/connect?packId=${payload.packId}`);
  expect(await text()).toContain(payload.machineName);
  await tab.close();

  // Reset machine, home erased too: asks first, then the running desktop restarts from the image.
  await card.getByRole('button', { name: 'Reset machine' }).click();
  const reset = page.getByRole('dialog', { name: 'Reset machine?' });
  await reset.waitFor();
  expect(await reset.innerText()).toContain('programs you installed and changes outside your home folder are removed');
  await reset.getByRole('checkbox', { name: /Also erase the home folder/ }).check();
  await snap(page, 'dashboard-04-reset');
  await reset.getByRole('button', { name: 'Reset machine' }).click();
  await reset.waitFor({ state: 'detached' });
  await card.getByText('Processing', { exact: true }).waitFor({ timeout: 60_000 });
  await card.getByText('Online', { exact: true }).waitFor({ timeout: 180_000 });

  // Stop: back to offline with Start Machine.
  await card.getByRole('button', { name: 'Stop' }).click();
  await card.getByText('Offline', { exact: true }).waitFor({ timeout: PUSH_WINDOW_MS });
  await card.getByRole('button', { name: 'Start Machine' }).waitFor();
  expect(await card.getByRole('button', { name: 'Connect' }).count()).toBe(0);
  await snap(page, 'dashboard-05-stopped');

  await page.getByRole('link', { name: 'Buy more hours' }).click();
  await page.waitForURL(`${t.server.base}/setup`);
  await page.context().close();
}, 400_000);
