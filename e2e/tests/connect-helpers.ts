import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { uniqueEmail } from '../harness';
import { seedUser } from './auth-helpers';
import { payOnCheckout, PAYING_CARD } from './buy-helpers';

/** Shared steps of the connect browser tests and bench/connect.ts. */

export interface Buyer {
  context: BrowserContext;
  page: Page;
  token: string;
  machineId: string;
  machineName: string;
}

export async function api(base: string, method: string, path: string, token?: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { idtoken: token } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function poll<T>(fn: () => Promise<T | undefined | null | false>, what: string, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A signed-up user with 10 paid hours on an offline UK machine: signed in in a new browser context, pays on the
 * built-in hosted checkout page with the test card, and waits until the balance shows the machine. `contextOptions`
 * change the browser context (a phone's window and touch screen).
 */
export async function buyer(browser: Browser, base: string, name = 'Ada Lovelace', transport: 'vnc' | 'webrtc' = 'vnc', contextOptions: BrowserContextOptions = {}): Promise<Buyer> {
  const account = { name, email: uniqueEmail('connect'), password: 'analytical42' };
  await seedUser(base, account);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  await preferTransport(context, transport);
  // Signs the browser in (the refresh cookie lands in the context) and keeps the id token for API calls.
  const login = await context.request.post(`${base}/v1/auth/login`, { data: { email: account.email, password: account.password } });
  if (!login.ok()) throw new Error(`login: ${login.status()} ${await login.text()}`);
  const token = ((await login.json()) as { accessToken: string }).accessToken;
  const page = await context.newPage();
  const { url } = await api(base, 'POST', '/v1/user/wallet/recharge', token, {
    packId: 'uk-unreal-10h',
    success_url: `${base}/success`,
    cancel_url: `${base}/failed`,
  });
  await page.goto(url);
  await payOnCheckout(page, PAYING_CARD);
  await page.waitForURL(/\/success\?orderId=/, { timeout: 20_000 });
  const entry = await poll(async () => (await api(base, 'GET', '/v1/user/wallet/balance', token)).balance[0], 'the paid machine');
  return { context, page, token, machineId: entry.packId, machineName: entry.machineName };
}

/** The connect tab's transport for this context (the tab remembers the user's choice in localStorage). */
export async function preferTransport(context: BrowserContext, transport: 'vnc' | 'webrtc'): Promise<void> {
  await context.addInitScript((t) => localStorage.setItem('hyperdesk.connect.transport', t), transport);
}

/** The machine's instanceStatus as the balance reports it. */
export async function statusOf(base: string, token: string, machineId: string): Promise<string | undefined> {
  const { balance } = await api(base, 'GET', '/v1/user/wallet/balance', token);
  return balance.find((e: { packId: string }) => e.packId === machineId)?.instanceStatus;
}

export async function waitOnline(base: string, token: string, machineId: string, ms = 60_000): Promise<void> {
  await poll(async () => (await statusOf(base, token, machineId)) === 'online', 'the machine to be online', ms);
}

/** The connect tab's address for a single user's machine, as the dashboard builds it (spec §7). */
export function connectHref(base: string, machineId: string, machineName: string): string {
  const payload = { url: `/v1/slot/connect?packId=${machineId}`, role: 'SINGLE', packId: machineId, machineName };
  return `${base}/connect#${Buffer.from(JSON.stringify(payload)).toString('base64')}`;
}

/** Distinct colours among a grid of pixels of the desktop canvas (a blank canvas has one). */
export async function canvasColours(tab: Page): Promise<number> {
  return tab.locator('[data-testid="desktop"] canvas').evaluate((el) => {
    const c = el as HTMLCanvasElement;
    if (!c.width || !c.height) return 0;
    const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set<number>();
    for (let y = 0; y < c.height; y += 8) {
      for (let x = 0; x < c.width; x += 8) {
        const i = (y * c.width + x) * 4;
        seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
      }
    }
    return seen.size;
  });
}
