import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { launchBrowser, startServer, type RunningServer } from '../harness';

/**
 * A file's server and browser, started before its tests and closed after them with every context the tests opened
 * (`newContext`): `const t = useServerAndBrowser();`, then `t.server.base`, `t.browser`. A failed test prints the end
 * of the server's output.
 */
export function useServerAndBrowser(env: Record<string, string> = {}) {
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
    [t.server, t.browser] = await Promise.all([startServer(env), launchBrowser()]);
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') console.log('SERVER OUTPUT\n' + t.server?.output().slice(-6000));
  });
  afterAll(async () => {
    await Promise.all(t.contexts.map((c) => c.close()));
    await t.browser?.close();
    await t.server?.close();
  });
  return t;
}
