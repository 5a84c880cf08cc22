import { afterEach, expect, it } from 'vitest';
import { operatorCli, snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { buyHours, signedInPage } from './buy-helpers';

/**
 * Issue 22.4: the alert banner. An operator takes 9 of the 10 hours away (the CLI's adjust-hours); the leader's
 * alerts job (once a minute) raises "1 hour left" and the card shows it with Buy more hours.
 */
const t = useServerAndBrowser();
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.log('SERVER OUTPUT\n' + t.server.output().slice(-6000));
});

it('"Only 1 hour left on <machine>. Buy more hours" on the card once the alert is raised', { timeout: 240_000 }, async () => {
  const { page, account } = await signedInPage(t.browser, t.server.base, 'Dorothy Vaughan');
  await buyHours(page, t.server.base, 'United Kingdom', 10);
  await page.getByRole('link', { name: 'Go to Dashboard' }).click();
  await page.waitForURL(`${t.server.base}/dashboard`);
  const card = page.getByRole('article');
  await card.waitFor();
  const name = await card.getByRole('heading').innerText();
  expect(await card.innerText()).not.toContain('Only 1 hour left');

  // PGlite admits one process: stop, run the CLI, start again.
  const pglite = !t.server.env.DATABASE_URL;
  if (pglite) await t.server.stop();
  await operatorCli(t.server, 'adjust-hours', account.email, '-540', 'Test: one hour left');
  if (pglite) await t.server.restart();

  const banner = card.getByText(`Only 1 hour left on ${name}.`);
  await expect
    .poll(
      async () => {
        await page.reload();
        await card.waitFor();
        return banner.count();
      },
      { timeout: 150_000, interval: 5000 },
    )
    .toBe(1);
  expect(await card.getByRole('status').innerText()).toContain('Buy more hours');
  await card.getByRole('status').getByRole('link', { name: 'Buy more hours' }).waitFor();
  await snap(page, 'hours-alert-banner');
});
