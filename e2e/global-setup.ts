import { chromium } from 'playwright-core';
import { BROWSER_ENDPOINT, CHROMIUM_ARGS, CHROMIUM_PATH } from './harness';

/**
 * One Chromium for the whole run, as Playwright's own runner keeps one per worker: each test file connects to it
 * (`launchBrowser`) and works in contexts of its own, closed with the file. A launch costs about 2.6 CPU-s on a 2-core
 * CI host, and the browser stage launched 33 of them.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  process.env[BROWSER_ENDPOINT] = server.wsEndpoint(); // the workers are forked after this, with this environment
  return () => server.close();
}
