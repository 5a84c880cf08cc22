import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, snap, startServer, type RunningServer } from '../harness';
import { streamingTab, terminalOutput, videoSize } from './stream-helpers';

let server: RunningServer;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The desktop size the tab's video area asks for: its shape within 1920x1080, even numbers (as the agent fits it). */
async function wanted(tab: Page): Promise<string> {
  const { w, h } = await tab.getByTestId('desktop').evaluate((el) => ({ w: el.clientWidth, h: el.clientHeight }));
  const scale = Math.min(1, 1920 / w, 1080 / h);
  const even = (n: number, lo: number, hi: number) => Math.floor(Math.max(lo, Math.min(hi, Math.floor(n * scale))) / 2) * 2;
  return `${even(w, 640, 1920)}x${even(h, 400, 1080)}`;
}

it('the desktop resolution follows the tab size within 1920x1080, and VNC gets the full desktop back', async () => {
  const b = await streamingTab(server, browser, 'Resize Tester');
  const { tab } = b;

  // The first size: the 1280x900 window's video area, not the desktop's 1920x1080.
  const first = await wanted(tab);
  expect(first).not.toBe('1920x1080');
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(first);
  // The desktop itself has that size (not just the picture): X says so inside the machine.
  expect(await terminalOutput(server, b, 'xdpyinfo | grep dimensions', 'dims1.txt')).toContain(`${first} pixels`);

  // A smaller window: the desktop shrinks with it.
  await tab.setViewportSize({ width: 1000, height: 700 });
  const second = await wanted(tab);
  expect(second).not.toBe(first);
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(second);
  expect(await terminalOutput(server, b, 'xdpyinfo | grep dimensions', 'dims2.txt')).toContain(`${second} pixels`);
  await snap(tab, 'stream-resize-1000x700');

  // A window bigger than the maximum: the desktop keeps the window's shape at 1920 wide.
  await tab.setViewportSize({ width: 2400, height: 1300 });
  const third = await wanted(tab);
  expect(third.startsWith('1920x')).toBe(true);
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(third);

  // The WebRTC viewer leaves: the desktop is back at full size, and VNC (which lived through every resize) shows it.
  await tab.setViewportSize({ width: 1280, height: 900 });
  await tab.getByTestId('switch-transport').click();
  await expect.poll(() => tab.getByTestId('transport').innerText()).toBe('VNC');
  const canvas = tab.locator('[data-testid="desktop"] canvas');
  await canvas.waitFor({ timeout: 30_000 });
  await expect.poll(() => canvas.evaluate((c) => `${(c as HTMLCanvasElement).width}x${(c as HTMLCanvasElement).height}`), { timeout: 20_000 }).toBe('1920x1080');
  await b.context.close();
}, 240_000);
