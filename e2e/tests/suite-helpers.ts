import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { launchBrowser, startServer, type RunningServer } from '../harness';

type Env = Record<string, string>;

/**
 * A file's server and browser, started before its tests and closed after them with every context the tests opened
 * (`newContext`): `const t = useServerAndBrowser();`, then `t.server.base`, `t.browser`. A failed test prints the end
 * of the server's output (its last `outputChars`, 6,000 unless told). `env` may be a function, called in the
 * `beforeAll` that starts the server, for an address known only once something the file starts first is up:
 * `beforeAll` the inbox, then `useServerAndBrowser(() => ({ SMTP_URL: inbox.url }))`. `setupTimeout` is that
 * `beforeAll`'s (the config's hookTimeout unless told).
 */
export function useServerAndBrowser(
  env: Env | (() => Env | Promise<Env>) = {},
  { setupTimeout, outputChars = 6000 }: { setupTimeout?: number; outputChars?: number } = {},
) {
  const t = {
    server: undefined as unknown as RunningServer,
    browser: undefined as unknown as Browser,
    contexts: [] as BrowserContext[],
    async newContext(options?: BrowserContextOptions): Promise<BrowserContext> {
      const context = await t.browser.newContext(options);
      t.contexts.push(context);
      return context;
    },
  };
  beforeAll(async () => {
    const serverEnv = typeof env === 'function' ? await env() : env;
    [t.server, t.browser] = await Promise.all([startServer(serverEnv), launchBrowser()]);
  }, setupTimeout);
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') console.log('SERVER OUTPUT\n' + t.server?.output().slice(-outputChars));
  });
  afterAll(async () => {
    await Promise.all(t.contexts.map((c) => c.close()));
    await t.browser?.close();
    await t.server?.close();
  });
  return t;
}

/**
 * What of the page lies past the width of its screen (a phone's, in the tests that call it): the page's own width when
 * it scrolls sideways, and each text or control of `main` sticking out, with its text. Empty when everything fits.
 */
export function pastTheEdge(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const w = document.documentElement.clientWidth;
    // Text only screen readers get (a table's headings when its rows are cards): clipped to a pixel, never in the way.
    const clipped = (e: Element) => {
      for (let a: Element | null = e; a; a = a.parentElement) if (getComputedStyle(a).clip !== 'auto') return true;
      return false;
    };
    const out = [...document.querySelectorAll('main *')]
      .filter((e) => e.childElementCount === 0 || /^(A|BUTTON|INPUT|SELECT)$/.test(e.tagName))
      .filter((e) => !clipped(e))
      .filter((e) => {
        const b = e.getBoundingClientRect();
        return b.width > 0 && (b.left < -0.5 || b.right > w + 0.5);
      })
      .map((e) => `${e.tagName} "${(e.textContent ?? '').slice(0, 40)}"`);
    return document.documentElement.scrollWidth > w ? [`the page is ${document.documentElement.scrollWidth} px wide`, ...out] : out;
  });
}
