import { expect, onTestFailed } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { snap, type RunningServer } from '../harness';
import { api, buyer, connectHref, waitOnline, type Buyer } from './connect-helpers';
import { machineLog as logOf, raiseTerminal, readHome as homeFile, windowTitles } from '../desktops';
import { typeUntil } from '../typing';

/** Shared steps of the WebRTC browser tests (stream-*.test.ts). */

/**
 * The desktop size the tab's video area asks for, as the agent fits it (server/agent/desktopsize.py): its shape, scaled
 * down to 1920x1080 (1080x1920 for an upright area) or up to 640x400, even numbers.
 */
export async function desktopSizeFor(tab: Page): Promise<string> {
  const { w, h } = await tab.getByTestId('desktop').evaluate((el) => ({ w: el.clientWidth, h: el.clientHeight }));
  const [maxW, maxH] = h > w ? [1080, 1920] : [1920, 1080];
  const down = Math.min(1, maxW / w, maxH / h);
  const scale = down < 1 ? down : Math.max(1, 640 / w, 400 / h);
  const even = (n: number, lo: number, hi: number) => Math.floor(Math.max(lo, Math.min(hi, Math.floor(n * scale))) / 2) * 2;
  return `${even(w, 640, maxW)}x${even(h, 400, maxH)}`;
}

/** A buyer whose machine is online, with its connect tab open and showing the desktop over WebRTC. */
export async function streamingTab(server: RunningServer, browser: Browser, name: string, contextOptions: BrowserContextOptions = {}): Promise<Buyer & { tab: Page }> {
  const b = await buyer(browser, server.base, name, 'webrtc', contextOptions);
  await api(server.base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId });
  await waitOnline(server.base, b.token, b.machineId);
  // A failure later in the test shows what the agent did (resizes, bitrate changes, keyframes): the server's output
  // does not carry it.
  onTestFailed(() => console.log(`AGENT LOG of ${b.machineId}\n${logOf(server, b.machineId, { quiet: true }).slice(-6000)}`));
  const tab = await b.context.newPage();
  await tab.goto(connectHref(server.base, b.machineId, b.machineName));
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });
  const transport = await tab.getByTestId('transport').innerText();
  // A tab that fell back to VNC says why only in the agent's and the server's logs.
  if (transport !== 'WebRTC') {
    throw new Error(`the tab shows the desktop over ${transport}, not WebRTC; agent log:\n${logOf(server, b.machineId)}\nserver:\n${server.output().slice(-4000)}`);
  }
  await expect.poll(() => videoSize(tab), { timeout: 20_000 }).not.toBe('0x0');
  await terminalShown(server, b.machineId, b.machineName);
  return { ...b, tab };
}

/**
 * Waits until the desktop's windows are up (its terminal, file manager and 3D demo): the desktop's programs start
 * once its VNC server listens, so a tab can show the desktop before the terminal is there to click into, and a
 * window mapping later can take the keyboard from it (as a user would see).
 */
export async function terminalShown(server: RunningServer, machineId: string, machineName: string): Promise<void> {
  const shown = () => {
    try {
      const titles = windowTitles(server, machineId);
      return [machineName, 'user', 'glxgears'].every((t) => titles.includes(t));
    } catch {
      return false;
    }
  };
  await expect.poll(shown, { timeout: 30_000 }).toBe(true);
}

/** The size of the decoded video, e.g. "1280x800" ("0x0" before the first frame). */
export function videoSize(tab: Page): Promise<string> {
  return tab.getByTestId('desktop-video').evaluate((el) => {
    const v = el as HTMLVideoElement;
    return `${v.videoWidth}x${v.videoHeight}`;
  });
}

/** A file in the machine's home folder ('' until it exists). */
export const readHome = (server: RunningServer, machineId: string, name: string): string => homeFile(server, machineId, name);

/** The machine's log: its desktop and its streaming agent write there (see desktops.ts machineLog). */
export const machineLog = (server: RunningServer, machineId: string, opts: { quiet?: boolean } = {}): string => logOf(server, machineId, opts);

/**
 * Clicks into the desktop's xterm (at +48+64, the desktop as big as the tab): near its left edge, where the file
 * manager the window manager places beside it never is (a quarter of the way in, it sometimes was, and took the keys).
 */
export async function clickTerminal(tab: Page): Promise<void> {
  const box = (await tab.getByTestId('desktop-video').boundingBox())!;
  await tab.mouse.click(box.x + Math.min(110, box.width * 0.08), box.y + Math.min(180, box.height * 0.2));
}

/**
 * Runs a shell line in the desktop's xterm (top left of the desktop) by clicking it and typing; with click false,
 * types into whatever has the desktop's focus (the pointer stays where it is).
 */
export async function runInTerminal(tab: Page, line: string, click = true): Promise<void> {
  if (click) await clickTerminal(tab);
  await tab.keyboard.type(`${line}\n`, { delay: 15 });
}

/**
 * Runs a shell line in the xterm that writes `file`, and answers the file's text once it has some. A desktop that
 * has just come up may not have its terminal focused yet when the first keys arrive, or its file manager may map over
 * the click: the line is typed again (it is idempotent), the terminal raised first, until the file shows up.
 */
export async function terminalOutput(server: RunningServer, b: Buyer & { tab: Page }, line: string, file: string, click = true): Promise<string> {
  return typeUntil({
    type: async (attempt) => {
      if (attempt > 1) raiseTerminal(server, b.machineId); // the file manager, mapped late, can lie over the click
      await runInTerminal(b.tab, `rm -f ${file}; ${line} > ${file}.tmp && mv ${file}.tmp ${file}`, click);
    },
    read: () => readHome(server, b.machineId, file),
    done: (text) => text !== '',
    failed: () => snap(b.tab, `stream-no-${file}`).then(() => undefined),
  });
}
