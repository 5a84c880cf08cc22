import { expect, it } from 'vitest';
import type { CDPSession, Page } from 'playwright-core';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { raiseTerminal } from '../desktops';
import { typeUntil } from '../typing';
import { desktopSizeFor, machineLog, readHome, streamingTab, videoSize } from './stream-helpers';

const t = useServerAndBrowser();

/** Where a desktop pixel shows in the window (the video keeps the desktop's shape inside its box). */
async function onScreen(tab: Page, dx: number, dy: number): Promise<{ x: number; y: number }> {
  const v = await tab.getByTestId('desktop-video').evaluate((el) => {
    const video = el as HTMLVideoElement;
    const r = video.getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height, vw: video.videoWidth, vh: video.videoHeight };
  });
  const scale = Math.min(v.width / v.vw, v.height / v.vh);
  return { x: v.left + (v.width - v.vw * scale) / 2 + dx * scale, y: v.top + (v.height - v.vh * scale) / 2 + dy * scale };
}

type Finger = { x: number; y: number };
/** Raw touch events, as a phone's fingers make them (Playwright's touchscreen only taps). */
function fingers(cdp: CDPSession) {
  const send = (type: 'touchStart' | 'touchMove' | 'touchEnd', pts: Finger[]) =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints: pts.map((p, id) => ({ x: Math.round(p.x), y: Math.round(p.y), id })) });
  return {
    /** Fingers go down at `from`, move together in `steps` to `to`, and lift. */
    async drag(from: Finger[], to: Finger[], steps = 8) {
      await send('touchStart', from);
      for (let i = 1; i <= steps; i++) {
        await send('touchMove', from.map((f, k) => ({ x: f.x + ((to[k]!.x - f.x) * i) / steps, y: f.y + ((to[k]!.y - f.y) * i) / steps })));
      }
      await send('touchEnd', []);
    },
    down: (at: Finger) => send('touchStart', [at]),
    up: () => send('touchEnd', []),
  };
}

/** Mouse reports of xterm's SGR mode (`ESC [ < button ; column ; row M|m`), ESC written as E by the probe. */
function reportsOf(text: string): { b: number; col: number; row: number; press: boolean }[] {
  return [...text.matchAll(/E\[<(\d+);(\d+);(\d+)([Mm])/g)].map((m) => ({ b: Number(m[1]), col: Number(m[2]), row: Number(m[3]), press: m[4] === 'M' }));
}

/** Whether the toolbar shows (in full screen it slides away and is hidden). */
/** Types `echo <word> > <file>` with the on-screen keyboard's way (text without key events) until the file holds it. */
const typeWord = (tab: Page, machineId: string, word: string, file: string) =>
  typeUntil({
    type: async () => {
      await tab.keyboard.insertText(`echo ${word} > ${file}`);
      await tab.keyboard.press('Enter');
    },
    read: () => readHome(t.server, machineId, file),
    done: (text) => text === `${word}\n`,
  });

const shown = (tab: Page) => tab.locator('header').isVisible();

it('on a phone: a tap clicks, a drag holds the button, two fingers scroll, a long press right-clicks; the Keyboard button types; full screen hides the toolbar until the top edge', async () => {
  const b = await streamingTab(t.server, t.browser, 'Touch Tester', { viewport: { width: 360, height: 740 }, hasTouch: true });
  const { tab } = b;
  // The desktop took the phone's upright shape before anything is touched: 640 wide at least, and as tall as the
  // video area's shape asks (640x1080, the landscape maximum's height, showed it with bands above and below).
  const upright = await desktopSizeFor(tab);
  expect(Number(upright.split('x')[1])).toBeGreaterThan(1100);
  await expect
    .poll(() => videoSize(tab), { timeout: 20_000 })
    .toBe(upright)
    .catch((e: Error) => {
      throw new Error(`${e.message}\nagent log:\n${machineLog(t.server, b.machineId)}`);
    });
  await snap(tab, 'connect-touch-360');
  // One row with the Keyboard button beside More: the name gives way, the hours and the buttons stay whole.
  for (const l of [tab.getByTestId('hours-left'), tab.getByRole('button', { name: 'Keyboard' }), tab.getByRole('button', { name: 'More' })]) {
    const box = (await l.boundingBox())!;
    expect(box.x >= 0 && box.x + box.width <= 360 && box.y + box.height <= 60, await l.innerText()).toBe(true);
  }

  // A tap on the terminal (a click: it has the keyboard), then the Keyboard button: the hidden text field takes the
  // focus, as a phone needs to open its keyboard; what the on-screen keyboard sends (text, Enter) reaches xterm.
  // The terminal on top first: on a screen this small the file manager, mapped after the desktop took the phone's
  // shape, can lie over it (the tap would focus that instead).
  raiseTerminal(t.server, b.machineId);
  const terminal = await onScreen(tab, 300, 200);
  await tab.touchscreen.tap(terminal.x, terminal.y);
  const keyboard = tab.getByRole('button', { name: 'Keyboard' });
  await keyboard.tap();
  expect(await tab.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('desktop-keys');
  // (A desktop that has just come up may give the terminal the keyboard a moment later: the line is typed again.)
  await typeWord(tab, b.machineId, 'typed-on-a-phone', 'phone.txt');
  // The probe: xterm reports mouse buttons, drags and the wheel to a shell `read` (until a q is typed) that writes
  // them to touch.txt; armed.txt says it listens. xterm reads the shell's output in its own time: the shell waits for
  // its answer to a status query (ESC [ 5 n, answered ESC [ 0 n) sent after the mode changes, so armed.txt comes once
  // xterm reports the mouse (a busy host's first tap once reached xterm before the modes did, as a plain click).
  await tab.keyboard.insertText(
    "printf '\\e[?1002h\\e[?1006h\\e[5n'; IFS= read -rsd n _; echo armed > armed.txt; IFS= read -rsd q ev; printf '\\e[?1002l\\e[?1006l'; printf '%s' \"$ev\" | tr '\\033' E > touch.txt",
  );
  await tab.keyboard.press('Enter');
  await expect.poll(() => readHome(t.server, b.machineId, 'armed.txt') !== '', { timeout: 10_000 }).toBe(true);
  await snap(tab, 'connect-touch-keyboard');

  const cdp = await tab.context().newCDPSession(tab);
  const touch = fingers(cdp);
  // Tap: a left click at the finger.
  const tapAt = await onScreen(tab, 400, 300);
  await tab.touchscreen.tap(tapAt.x, tapAt.y);
  // Drag with one finger: the left button held from (150, 150) to (350, 400).
  await touch.drag([await onScreen(tab, 150, 150)], [await onScreen(tab, 350, 400)]);
  // Two fingers up by 120 px of the window: wheel down steps; back down: wheel up steps.
  const [l, r] = [await onScreen(tab, 250, 450), await onScreen(tab, 400, 450)];
  await touch.drag([l, r], [{ x: l.x, y: l.y - 120 }, { x: r.x, y: r.y - 120 }]);
  await touch.drag([l, r], [{ x: l.x, y: l.y + 80 }, { x: r.x, y: r.y + 80 }]);
  // A long press: held past the long-press time (the gesture is a duration), a right click.
  await touch.down(await onScreen(tab, 300, 350));
  await tab.waitForTimeout(900);
  await touch.up();
  // A trackpad's wheel (the same tab with a mouse): 30 movements of 4 px down make two notches (a notch each 50 px), not 30.
  const wheelAt = await onScreen(tab, 300, 350);
  await tab.mouse.move(wheelAt.x, wheelAt.y);
  for (let i = 0; i < 30; i++) await tab.mouse.wheel(0, 4);
  await tab.keyboard.insertText('q');
  await expect.poll(() => readHome(t.server, b.machineId, 'touch.txt'), { timeout: 15_000 }).not.toBe('');
  const reports = reportsOf(readHome(t.server, b.machineId, 'touch.txt'));
  const codes = reports.map((e) => `${e.b}${e.press ? 'M' : 'm'}`).join(' ');
  // In order: tap (press, release), drag (press, motion with button 1, release), wheel down, wheel up, right click,
  // the trackpad's two notches down.
  expect(codes).toMatch(/^0M 0m 0M (32M )+0m (65M )+(64M )+2M 2m 65M 65M$/);
  const [tapDown, tapUp, dragDown] = reports;
  const dragUp = reports.find((e, i) => i > 2 && e.b === 0 && !e.press)!;
  expect(tapUp).toMatchObject({ col: tapDown!.col, row: tapDown!.row });
  // The drag went right and down from its start, which is up and left of the tap (the finger's place on the desktop).
  expect(dragUp.col).toBeGreaterThan(dragDown!.col);
  expect(dragUp.row).toBeGreaterThan(dragDown!.row);
  expect(dragDown!.col).toBeLessThan(tapDown!.col);
  expect(dragDown!.row).toBeLessThan(tapDown!.row);
  expect(reports.filter((e) => e.b === 65).length).toBeGreaterThanOrEqual(3);

  // Full screen (from More, as on a phone): the toolbar slides away; the note says how to leave and how to call it.
  await tab.getByRole('button', { name: 'More' }).tap();
  await tab.getByRole('button', { name: 'Full screen' }).tap();
  await expect.poll(() => tab.evaluate(() => document.fullscreenElement?.tagName ?? null)).toBe('MAIN');
  await expect.poll(() => shown(tab), { timeout: 10_000 }).toBe(false);
  const hint = tab.getByRole('status').filter({ hasText: 'to exit full screen' });
  await hint.waitFor();
  // Where the browser locks the keyboard in full screen (Chromium does), Esc goes to the desktop: leaving takes holding it.
  const locks = await tab.evaluate(() => 'keyboard' in navigator && typeof (navigator as { keyboard?: { lock?: unknown } }).keyboard?.lock === 'function');
  expect(await hint.innerText()).toContain(locks ? 'Hold Esc to exit full screen' : 'Press Esc to exit full screen');
  expect(await hint.innerText()).toContain('Tap the top edge for the toolbar');
  await snap(tab, 'connect-touch-fullscreen');
  // The mouse reaching the top edge brings it back; leaving it sends it away again.
  await tab.mouse.move(200, 300);
  await tab.mouse.move(200, 0);
  await expect.poll(() => shown(tab), { timeout: 10_000 }).toBe(true);
  await tab.mouse.move(200, 400);
  await expect.poll(() => shown(tab), { timeout: 10_000 }).toBe(false);
  // A tap at the top edge brings it back, a touch on the desktop sends it away.
  await tab.touchscreen.tap(60, 2);
  await expect.poll(() => shown(tab), { timeout: 10_000 }).toBe(true);
  await expect.poll(async () => (await tab.locator('header').boundingBox())?.y).toBe(0); // slid all the way in
  expect(await tab.getByRole('status').filter({ hasText: 'to exit full screen' }).count()).toBe(0);
  await snap(tab, 'connect-touch-fullscreen-toolbar');
  const desk = await onScreen(tab, 320, 500);
  await tab.touchscreen.tap(desk.x, desk.y);
  await expect.poll(() => shown(tab), { timeout: 10_000 }).toBe(false);
  // And out again through the toolbar.
  await tab.touchscreen.tap(60, 2);
  await expect.poll(() => shown(tab), { timeout: 10_000 }).toBe(true);
  await tab.getByRole('button', { name: 'More' }).tap();
  await tab.getByRole('button', { name: 'Exit full screen' }).tap();
  await expect.poll(() => tab.evaluate(() => document.fullscreenElement)).toBe(null);
  expect(await shown(tab)).toBe(true);

  // Under VNC, noVNC's own gestures: a tap clicks into the terminal; the Keyboard button opens input there too.
  await tab.getByRole('button', { name: 'More' }).tap();
  await tab.getByTestId('switch-transport').tap();
  await expect.poll(() => tab.getByTestId('transport').innerText()).toBe('VNC');
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  const canvas = tab.locator('[data-testid="desktop"] canvas');
  const box = (await canvas.boundingBox())!;
  // The terminal's place (300, 200) on the desktop, whatever its size (the canvas is the desktop, scaled to fit).
  const scale = box.width / (await canvas.evaluate((c) => (c as HTMLCanvasElement).width));
  await tab.touchscreen.tap(box.x + 300 * scale, box.y + 200 * scale);
  await keyboard.tap();
  expect(await tab.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid)).toBe('desktop-keys');
  await typeWord(tab, b.machineId, 'typed-under-vnc', 'vnc.txt');
  await snap(tab, 'connect-touch-vnc-keyboard');
  await b.context.close();
}, 300_000);
