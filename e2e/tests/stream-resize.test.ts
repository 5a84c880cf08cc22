import { expect, it } from 'vitest';
import { snap, type RunningServer } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { desktopWindows, type DesktopWindow } from '../desktops';
import { desktopSizeFor, machineLog, streamingTab, terminalOutput, videoSize } from './stream-helpers';

const t = useServerAndBrowser();

/** The frame rate the agent chose for a size, as its log says (framerate.py; a desktop has 2 cores here). */
const captureAt = (server: RunningServer, machineId: string, size: string) => {
  const said = [...machineLog(t.server, machineId).matchAll(/capture at (\d+) fps for (\d+x\d+)/g)].filter((m) => m[2] === size);
  return said.length ? Number(said.at(-1)![1]) : null;
};

it('the desktop resolution follows the tab size within 1920x1080, at 60 fps where its cores afford the size, and VNC gets the full desktop back', async () => {
  const b = await streamingTab(t.server, t.browser, 'Resize Tester');
  const { tab } = b;

  // The first size: the 1280x900 window's video area, not the desktop's 1920x1080.
  const first = await desktopSizeFor(tab);
  expect(first).not.toBe('1920x1080');
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(first);
  // The desktop itself has that size (not just the picture): X says so inside the machine.
  expect(await terminalOutput(t.server, b, 'xdpyinfo | grep dimensions', 'dims1.txt')).toContain(`${first} pixels`);
  // 1280x854 on the desktop's 2 cores: 60 fps (the full 1920x1080 it started at had 30).
  await expect.poll(() => captureAt(t.server, b.machineId, first), { timeout: 20_000 }).toBe(60);

  // A smaller window: the desktop shrinks with it.
  await tab.setViewportSize({ width: 1000, height: 700 });
  const second = await desktopSizeFor(tab);
  expect(second).not.toBe(first);
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(second);
  expect(await terminalOutput(t.server, b, 'xdpyinfo | grep dimensions', 'dims2.txt')).toContain(`${second} pixels`);
  await snap(tab, 'stream-resize-1000x700');

  // A window bigger than the maximum: the desktop keeps the window's shape at 1920 wide.
  await tab.setViewportSize({ width: 2400, height: 1300 });
  const third = await desktopSizeFor(tab);
  expect(third.startsWith('1920x')).toBe(true);
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(third);
  // Past 1280x1024 on 2 cores: back to 30 fps, and the picture goes on (its size just changed after the new rate).
  await expect.poll(() => captureAt(t.server, b.machineId, third), { timeout: 20_000 }).toBe(30);
  await tab.setViewportSize({ width: 1100, height: 800 });
  const fourth = await desktopSizeFor(tab);
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(fourth);

  // The WebRTC viewer leaves: the desktop is back at full size, and VNC (which lived through every resize) shows it.
  await tab.setViewportSize({ width: 1280, height: 900 });
  await tab.getByTestId('switch-transport').click();
  await expect.poll(() => tab.getByTestId('transport').innerText()).toBe('VNC');
  const canvas = tab.locator('[data-testid="desktop"] canvas');
  await canvas.waitFor({ timeout: 30_000 });
  await expect.poll(() => canvas.evaluate((c) => `${(c as HTMLCanvasElement).width}x${(c as HTMLCanvasElement).height}`), { timeout: 20_000 }).toBe('1920x1080');
  await b.context.close();
}, 240_000);

/** The windows a user works with (not the panel): each with its frame, decorations included. */
function userWindows(server: RunningServer, machineId: string): { screen: { w: number; h: number }; windows: DesktopWindow[] } {
  const d = desktopWindows(t.server, machineId);
  return { ...d, windows: d.windows.filter((w) => w.type !== 'DOCK' && w.type !== 'DESKTOP') };
}

const outside = (w: DesktopWindow, screen: { w: number; h: number }) => w.x < 0 || w.y < 0 || w.x + w.w > screen.w || w.y + w.h > screen.h;

it('a window pushed off-screen by a resize is back on-screen', async () => {
  const b = await streamingTab(t.server, t.browser, 'Window Tester');
  const { tab } = b;

  // The windows where they are on the desktop at the tab's first size.
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(await desktopSizeFor(tab));
  // The picture can come before the session has mapped its windows (the terminal, the 3D demo a second later).
  let before: DesktopWindow[] = [];
  await expect
    .poll(() => (before = userWindows(t.server, b.machineId).windows).map((x) => x.title), { timeout: 60_000 })
    .toEqual(expect.arrayContaining([b.machineName, 'glxgears']));
  // A small tab: the desktop shrinks to a size that the 3D demo (placed at x 1360) and the terminal (about 900 px
  // wide) do not fit in where they are.
  await tab.setViewportSize({ width: 760, height: 560 });
  const small = await desktopSizeFor(tab);
  const [w, h] = small.split('x').map(Number) as [number, number];
  expect(before.map((x) => x.title)).toEqual(expect.arrayContaining([b.machineName, 'glxgears']));
  expect(before.filter((x) => outside(x, { w, h })).map((x) => x.title)).toEqual(expect.arrayContaining([b.machineName, 'glxgears']));
  // One of them is bigger than the small desktop: it has to be made smaller, not only moved.
  expect(before.some((x) => x.w > w || x.h > h)).toBe(true);

  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).toBe(small);
  // Every window is wholly on the small desktop: moved, and made smaller where it was bigger than the screen.
  let seen = userWindows(t.server, b.machineId);
  await expect
    .poll(() => {
      seen = userWindows(t.server, b.machineId);
      return { screen: `${seen.screen.w}x${seen.screen.h}`, outside: seen.windows.filter((x) => outside(x, seen.screen)).map((x) => `${x.title} ${x.w}x${x.h}+${x.x}+${x.y}`) };
    }, { timeout: 20_000 })
    .toEqual({ screen: small, outside: [] });
  expect(seen.windows.map((x) => x.title)).toEqual(expect.arrayContaining([b.machineName, 'glxgears']));
  await snap(tab, 'stream-resize-windows-on-screen');
  await b.context.close();
}, 240_000);
