import { afterEach, expect, it } from 'vitest';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { buyHours, signedInPage } from './buy-helpers';

/**
 * Issue 22.4: the dashboard's forecast. An unused machine says nothing; once it has run (metering charges a minute
 * when it begins) the card says when its hours run out at this pace.
 */
const t = useServerAndBrowser();
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.log('SERVER OUTPUT\n' + t.server.output().slice(-6000));
});

it('no forecast while unused; "At this pace your hours run out on <date>" after use', async () => {
  const { page } = await signedInPage(t.browser, t.server.base, 'Mary Jackson');
  await buyHours(page, t.server.base, 'United Kingdom', 10);
  const notices = () => page.waitForResponse((r) => r.url().endsWith('/v1/user/hours/notices') && r.ok(), { timeout: 15_000 });
  // The notices have answered (nothing for an unused machine) before we look for the absence of the line.
  await Promise.all([notices(), page.getByRole('link', { name: 'Go to Dashboard' }).click()]);
  await page.waitForURL(`${t.server.base}/dashboard`);
  const card = page.getByRole('article');
  await card.waitFor();
  expect(await card.innerText()).toMatch(/10\s+of 10 hours left/);
  expect(await card.innerText()).not.toContain('At this pace');

  await card.getByRole('button', { name: 'Start Machine' }).click();
  await card.getByText('Online', { exact: true }).waitFor({ timeout: 60_000 });
  // Metering charges the first minute at once; a reload reads the notices again.
  await expect
    .poll(
      async () => {
        await Promise.all([notices(), page.reload()]);
        await card.waitFor();
        return card.innerText();
      },
      { timeout: 60_000, interval: 3000 },
    )
    .toMatch(/At this pace your hours run out on \d{2} [A-Z][a-z]{2} '\d{2}/);
  expect(await card.innerText()).not.toContain('Buy more hours'); // no alert: 10 hours are far from 20%
  await snap(page, 'hours-forecast');
  await card.getByRole('button', { name: 'Stop' }).click();
  await card.getByText('Offline', { exact: true }).waitFor({ timeout: 30_000 });
});
