import { expect, it } from 'vitest';
import { useServerAndBrowser } from './suite-helpers';

const t = useServerAndBrowser();

it('serves the app and keeps data across a restart', async () => {
  const page = await t.browser.newPage();
  await page.goto(t.server.base + '/');
  await expect(page.title()).resolves.toContain('Hyperdesk');
  await t.server.restart();
  const res = await fetch(t.server.base + '/readyz');
  expect(res.status).toBe(200);
});
