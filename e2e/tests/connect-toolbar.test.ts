import { expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { connectHref } from './connect-helpers';
import { streamingTab } from './stream-helpers';

const t = useServerAndBrowser();

/** Fully inside the window (not cut off at its right edge, not below it). */
async function inView(tab: Page, l: Locator): Promise<boolean> {
  const box = await l.boundingBox();
  const vp = tab.viewportSize()!;
  return !!box && box.width > 0 && box.x >= 0 && box.y >= 0 && box.x + box.width <= vp.width && box.y + box.height <= vp.height;
}

const toolbarHeight = (tab: Page) => tab.locator('header').evaluate((el) => el.getBoundingClientRect().height);

it('the toolbar keeps one row: at 360×740 every control is reachable under More; at 1440 px a long name does not wrap it', async () => {
  const b = await streamingTab(t.server, t.browser, 'Toolbar Tester');
  const { tab } = b;

  // 1440 px wide, a long course name: one row, the name cut with an ellipsis, every control in the row.
  const long = 'Advanced Real-Time Rendering with Unreal Engine 5 — Spring Cohort 2027, Section B (Evening)';
  const wide = await b.context.newPage();
  await wide.setViewportSize({ width: 1440, height: 900 });
  await wide.goto(connectHref(t.server.base, b.machineId, long));
  await wide.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  expect(await toolbarHeight(wide)).toBeLessThan(60);
  expect(await wide.getByRole('button', { name: 'More' }).isVisible()).toBe(false);
  for (const name of ['Use VNC', 'Lock mouse', 'Stats', 'Clipboard', 'Full screen', 'Disconnect']) {
    expect(await inView(wide, wide.getByRole('button', { name, exact: true })), name).toBe(true);
  }
  await snap(wide, 'connect-toolbar-1440-long-name');
  // The desktop streams to one tab at a time: the first tab says another one took it and waits (it does not take it
  // back by itself, which made two tabs take it from each other) until the user asks for it here.
  await tab.getByRole('heading', { name: 'Your desktop is open somewhere else' }).waitFor();
  await snap(tab, 'connect-elsewhere');
  await wide.close();
  await tab.getByRole('button', { name: 'Use here' }).click();
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  expect(await tab.getByTestId('transport').innerText()).toBe('WebRTC');
  // At 1280 px (the other tests' window) too, every control stays in the row.
  expect(await toolbarHeight(tab)).toBeLessThan(60);
  for (const name of ['Use VNC', 'Lock mouse', 'Stats', 'Clipboard', 'Full screen', 'Disconnect']) {
    expect(await inView(tab, tab.getByRole('button', { name, exact: true })), name).toBe(true);
  }
  await snap(tab, 'connect-toolbar-1280');

  // A phone: 360×740. One row with the name, the hours and More; the rest is in More's panel.
  await tab.setViewportSize({ width: 360, height: 740 });
  await expect.poll(() => toolbarHeight(tab)).toBeLessThan(60);
  const more = tab.getByRole('button', { name: 'More' });
  expect(await inView(tab, more)).toBe(true);
  expect(await inView(tab, tab.getByTestId('hours-left'))).toBe(true);
  await snap(tab, 'connect-toolbar-360');
  await more.click();
  expect(await more.getAttribute('aria-expanded')).toBe('true');
  expect(await tab.getByRole('button', { name: 'Clipboard' }).isEnabled()).toBe(true);
  const controls = [
    tab.getByTestId('transport'),
    tab.getByTestId('switch-transport'),
    tab.getByRole('button', { name: 'Lock mouse' }),
    tab.getByTestId('video-quality'),
    tab.getByRole('button', { name: 'Stats' }),
    tab.getByRole('button', { name: 'Clipboard' }),
    tab.getByRole('button', { name: 'Full screen' }),
    tab.getByRole('button', { name: 'Disconnect' }),
  ];
  for (const c of controls) expect(await inView(tab, c), await c.evaluate((el) => el.textContent ?? '')).toBe(true);
  await snap(tab, 'connect-toolbar-360-more');

  // They work from the panel: Stats, Quality, Clipboard; Escape closes the panel, More opens it again.
  await tab.getByRole('button', { name: 'Stats' }).click();
  await tab.getByTestId('stream-stats').waitFor();
  await tab.getByTestId('video-quality').selectOption('medium');
  expect(await tab.getByTestId('video-quality').inputValue()).toBe('medium');
  await tab.getByRole('button', { name: 'Clipboard' }).click();
  await tab.getByRole('region', { name: 'Clipboard' }).waitFor();
  expect(await inView(tab, tab.getByRole('button', { name: 'Send to machine' }))).toBe(true);
  await tab.keyboard.press('Escape');
  await expect.poll(() => more.getAttribute('aria-expanded')).toBe('false');
  expect(await tab.getByRole('button', { name: 'Disconnect' }).isVisible()).toBe(false);
  await snap(tab, 'connect-toolbar-360-clipboard');
  await more.click();
  await tab.getByRole('button', { name: 'Disconnect' }).click();
  await tab.getByRole('heading', { name: "You're disconnected" }).waitFor();
  expect(await inView(tab, tab.getByRole('button', { name: 'Reconnect' }))).toBe(true);
  await b.context.close();
}, 240_000);
