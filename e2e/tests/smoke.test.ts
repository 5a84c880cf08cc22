import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, startServer, type RunningServer } from '../harness';

let server: RunningServer;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('serves the app and keeps data across a restart', async () => {
  const page = await browser.newPage();
  await page.goto(server.base + '/');
  await expect(page.title()).resolves.toContain('Hyperdesk');
  await server.restart();
  const res = await fetch(server.base + '/readyz');
  expect(res.status).toBe(200);
});
