import { expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { snap } from '../harness';
import { useServerAndBrowser } from './suite-helpers';
import { desktopWindows, raiseTerminal, readHome as homeFile } from '../desktops';
import { typeUntil } from '../typing';
import { terminalShown } from './stream-helpers';
import { buyer, canvasColours, connectHref } from './connect-helpers';

const t = useServerAndBrowser();

/** A checksum of the desktop canvas: changes whenever anything is drawn. */
function canvasHash(tab: Page): Promise<number> {
  return tab.locator('[data-testid="desktop"] canvas').evaluate((el) => {
    const c = el as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 4) h = (h * 31 + d[i]! + d[i + 1]! * 7 + d[i + 2]! * 13) | 0;
    return h;
  });
}

/** A point of the remote desktop (1920×1080) on the page, wherever the scaled canvas sits. */
async function at(canvas: Locator, x: number, y: number): Promise<{ x: number; y: number }> {
  const box = (await canvas.boundingBox())!;
  return { x: box.x + (x / 1920) * box.width, y: box.y + (y / 1080) * box.height };
}

const readHome = (machineId: string, name: string) => homeFile(t.server, machineId, name);

/**
 * Clicks into the xterm and types an idempotent shell line until `file` in the home folder holds `want`, at most three
 * times: a window that maps just after the click (the file manager, on a loaded host) can take the first keys. Before
 * a second try the terminal is raised, as a click on its title bar would; a third failure says what the desktop shows.
 */
async function typeLine(tab: Page, canvas: Locator, machineId: string, line: string, file: string, want: string): Promise<void> {
  await typeUntil({
    type: async (attempt) => {
      if (attempt > 1) raiseTerminal(t.server, machineId);
      const xterm = await at(canvas, 110, 180);
      await tab.mouse.click(xterm.x, xterm.y);
      if (attempt > 1) await tab.keyboard.press('Control+U');
      await tab.keyboard.type(line, { delay: 15 });
      await tab.keyboard.press('Enter');
    },
    read: () => readHome(machineId, file),
    done: (text) => text === want,
    failed: async () => {
      await snap(tab, `connect-no-${file}`);
      return `"${line}" never wrote ${file}; the desktop's windows: ${JSON.stringify(desktopWindows(t.server, machineId))}`;
    },
  });
}

const connected = (tab: Page) => tab.locator('main[data-phase="connected"]').waitFor({ timeout: 60_000 });

it('buy → start → Connect: the desktop in a new tab, typing, clipboard, disconnect and reconnect', async () => {
  const { page } = await buyer(t.browser, t.server.base);
  await page.goto(`${t.server.base}/dashboard`);
  const card = page.getByRole('article');
  await card.getByRole('button', { name: 'Start Machine' }).click();
  await card.getByText('Online', { exact: true }).waitFor({ timeout: 60_000 });

  // The dashboard fetches the tab's first ticket on the click and hands it over while the tab loads. The tab also asks
  // for its own and takes whichever comes first; on a loaded host its own can win that race, so the tab's own request
  // is held until its first socket is dialled (15 s at most): the socket must then carry the dashboard's ticket.
  const gatewayTickets: string[] = [];
  let dialled = () => {};
  const firstSocket = new Promise<void>((resolve) => (dialled = resolve));
  page.context().once('page', (p) =>
    p.on('websocket', (ws) => {
      gatewayTickets.push(new URL(ws.url()).searchParams.get('ticket') ?? '');
      dialled();
    }),
  );
  await page.context().route('**/v1/slot/connect/ticket', async (route) => {
    if (route.request().frame().page() !== page) await Promise.race([firstSocket, new Promise((r) => setTimeout(r, 15_000))]);
    await route.continue();
  });
  const dashboardTicket = page.waitForResponse((r) => r.url().endsWith('/v1/slot/connect/ticket') && r.request().method() === 'POST');
  const [tab] = await Promise.all([page.context().waitForEvent('page'), card.getByRole('button', { name: 'Connect' }).click()]);
  const payload = JSON.parse(Buffer.from(new URL(tab.url()).hash.slice(1), 'base64').toString('utf8'));
  await connected(tab);
  expect(gatewayTickets[0]).toBe(((await (await dashboardTicket).json()) as { ticket: string }).ticket);
  await page.context().unroute('**/v1/slot/connect/ticket');
  await expect.poll(() => tab.title()).toBe(`${payload.machineName} — Hyperdesk`);
  const canvas = tab.locator('[data-testid="desktop"] canvas');
  await expect.poll(() => canvasColours(tab), { timeout: 20_000 }).toBeGreaterThan(3);
  await expect.poll(() => tab.getByTestId('quality').innerText(), { timeout: 15_000 }).toMatch(/^\d+ ms · \d/);
  await expect.poll(() => tab.getByTestId('hours-left').innerText()).toMatch(/^\d+(\.\d)? hours left$/);
  await snap(tab, 'connect-01-desktop');

  // Keyboard into the xterm: the command runs on the machine and writes into its home folder. The desktop's programs
  // start once its VNC server listens, so the tab can show the desktop before the terminal is there: as a user would,
  // the test waits for the terminal, clicks into it near its left edge (the file manager is never there) and types.
  await terminalShown(t.server, payload.packId, payload.machineName);
  await typeLine(tab, canvas, payload.packId, 'echo hyperdesk-$((6*7)) > ~/typed.txt', 'typed.txt', 'hyperdesk-42\n');

  // Clipboard, this computer → machine: the paste box sets the machine's selection; Shift+Insert pastes it in xterm.
  await tab.getByRole('button', { name: 'Clipboard' }).click();
  const box = tab.getByRole('textbox', { name: 'Clipboard' });
  await box.fill('echo pasted-$((5+5)) > ~/pasted.txt');
  await tab.getByRole('button', { name: 'Send to machine' }).click();
  await snap(tab, 'connect-02-clipboard');
  await tab.getByRole('button', { name: 'Close', exact: true }).click(); // the desktop has the keyboard again
  // xterm fetches the selection from the VNC server asynchronously: Enter once the pasted line is drawn, and again
  // when the paste came after that (a blinking cursor also changes the picture); on an emptied line at most 3 times.
  const pasted = () => expect.poll(() => readHome(payload.packId, 'pasted.txt'), { timeout: 8_000 }).toBe('pasted-10\n').then(() => true, () => false);
  for (let attempt = 1; ; attempt++) {
    const before = await canvasHash(tab);
    await tab.keyboard.press('Shift+Insert');
    await expect.poll(() => canvasHash(tab), { timeout: 15_000 }).not.toBe(before).catch(() => undefined);
    await tab.keyboard.press('Enter');
    if (await pasted()) break;
    await tab.keyboard.press('Enter');
    if (await pasted()) break;
    if (attempt === 3) throw new Error(`Shift+Insert did not paste: ${JSON.stringify(readHome(payload.packId, 'pasted.txt'))}`);
    await tab.keyboard.press('Control+U');
  }

  // Clipboard, machine → this computer: selecting text in xterm reaches the paste box.
  await tab.keyboard.type('clear; echo copied-$((7*11))', { delay: 15 });
  await tab.keyboard.press('Enter');
  const from = await at(canvas, 52, 88); // the xterm's first text row (its title bar is above, at y 64–83)
  const to = await at(canvas, 700, 150);
  // The xterm may not have run `clear` yet when we first drag (a busy machine): select again until it has.
  await expect
    .poll(
      async () => {
        await tab.mouse.move(from.x, from.y);
        await tab.mouse.down();
        await tab.mouse.move(to.x, to.y, { steps: 8 });
        await tab.mouse.up();
        await tab.getByRole('button', { name: 'Clipboard' }).click();
        const got = await box
          .evaluate((el, want) => new Promise<boolean>((resolve) => {
            const end = Date.now() + 5_000;
            const look = () => ((el as HTMLTextAreaElement).value.includes(want) ? resolve(true) : Date.now() > end ? resolve(false) : setTimeout(look, 100));
            look();
          }), 'copied-77');
        await tab.getByRole('button', { name: 'Close', exact: true }).click();
        return got;
      },
      { timeout: 45_000 },
    )
    .toBe(true);

  // Disconnect, then reconnect with a new ticket.
  const tickets: string[] = [];
  tab.on('request', (r) => {
    if (r.url().endsWith('/v1/slot/connect/ticket')) tickets.push(r.url());
  });
  await tab.getByRole('button', { name: 'Disconnect' }).click();
  await tab.getByRole('heading', { name: "You're disconnected" }).waitFor();
  await snap(tab, 'connect-03-disconnected');
  await tab.getByRole('button', { name: 'Reconnect' }).click();
  await connected(tab);
  expect(tickets).toHaveLength(1);
  await expect.poll(() => canvasColours(tab), { timeout: 20_000 }).toBeGreaterThan(3);

  // A drop (the server restarts): the tab reconnects by itself once the server is back.
  await t.server.restart();
  await tab.locator('main[data-phase="connected"]').waitFor({ state: 'detached', timeout: 30_000 }).catch(() => undefined);
  await connected(tab);
  expect(tickets.length).toBeGreaterThanOrEqual(2);
  await typeLine(tab, canvas, payload.packId, 'echo again > ~/again.txt', 'again.txt', 'again\n');

  // Stopped from the dashboard while connected: the tab says so.
  await page.reload();
  await page.getByRole('article').getByRole('button', { name: 'Stop' }).click();
  await tab.getByRole('heading', { name: 'This machine was stopped' }).waitFor({ timeout: 30_000 });
  await snap(tab, 'connect-04-stopped');

  // Opened again while offline.
  await tab.reload();
  await tab.getByRole('heading', { name: 'Your machine is offline' }).waitFor({ timeout: 30_000 });
  await tab.getByRole('button', { name: 'Start Machine' }).waitFor();
  await snap(tab, 'connect-05-offline');

  // A fragment that is not a payload.
  await tab.goto(`${t.server.base}/connect#not-a-payload`);
  await tab.getByRole('heading', { name: 'This connection link is not valid' }).waitFor();
  await snap(tab, 'connect-06-bad-link');
  await page.context().close();
});

/**
 * While idle, the dashboard fetches the Connect page's files into the browser's cache (lib/prefetchConnect.ts), so a
 * Connect tab takes none of them over the link it dials the desktop on. (Not in the test above: a context with routes
 * has no HTTP cache.)
 */
it("a Connect tab takes its page's files from the cache the dashboard filled", async () => {
  const { page } = await buyer(t.browser, t.server.base);
  await page.goto(`${t.server.base}/dashboard`);
  const card = page.getByRole('article');
  const files = String.raw`/\/assets\/Connect-[^/]+\.(js|css)$/`;
  const fetched = (p: Page) => p.evaluate(`performance.getEntriesByType('resource').filter((r) => ${files}.test(r.name) && r.responseEnd > 0).map((r) => [r.name.split('.').pop(), r.transferSize])`) as Promise<[string, number][]>;
  await expect.poll(async () => (await fetched(page)).map(([kind]) => kind).sort(), { timeout: 15_000 }).toEqual(['css', 'js']);
  expect((await fetched(page)).every(([, bytes]) => bytes > 0)).toBe(true); // fetched over the network, once
  await card.getByRole('button', { name: 'Start Machine' }).click();
  await card.getByText('Online', { exact: true }).waitFor({ timeout: 60_000 });
  const [tab] = await Promise.all([page.context().waitForEvent('page'), card.getByRole('button', { name: 'Connect' }).click()]);
  await expect.poll(async () => (await fetched(tab)).map(([kind]) => kind).sort(), { timeout: 15_000 }).toEqual(['css', 'js']);
  expect((await fetched(tab)).map(([, bytes]) => bytes)).toEqual([0, 0]); // both from the cache
  await page.context().close();
});

it('shows the starting countdown and the out-of-hours screen the server answers with', async () => {
  const b = await buyer(t.browser, t.server.base, 'Screen Checker');
  const tab = await b.context.newPage();
  let answer = { code: 'machine-starting', message: 'Your machine is starting. It will be ready within 5 minutes.' };
  // The answers a starting machine and one without hours get (the real cases are covered by the API tests).
  await tab.route('**/v1/slot/connect/ticket', (route) =>
    route.fulfill({
      status: 409,
      contentType: 'application/json',
      body: JSON.stringify({ statusCode: 409, error: 'Conflict', reqId: 'r', processingSince: null, stopReason: null, ...answer }),
    }),
  );
  await tab.goto(connectHref(t.server.base, b.machineId, b.machineName));
  await tab.getByRole('heading', { name: 'Your machine is starting' }).waitFor();
  expect(await tab.getByTestId('countdown').innerText()).toBe('Ready in about 5 minutes.');
  expect(await tab.title()).toBe('Connecting…');
  await snap(tab, 'connect-09-starting');

  answer = { code: 'hours-exhausted', message: 'You have no hours left on this machine. Top up to keep working.' };
  await tab.reload();
  await tab.getByRole('heading', { name: "You're out of hours" }).waitFor();
  expect(await tab.getByRole('link', { name: 'Top up hours' }).getAttribute('href')).toBe('/setup');
  await snap(tab, 'connect-10-hours-exhausted');
  await b.context.close();
});
