/**
 * Connect, end to end in Chromium on the local provider: time from the dashboard's Start Machine click to the first
 * desktop frame in the connect tab (p50, p95; with the split start → online → first frame), and the bytes per second
 * the gateway relays (from its /metrics counters) for an idle desktop and for a typing session in the xterm.
 * Baseline, measured in the same run (a few samples after each run's first frame, on the same running desktop): an RFB
 * handshake and the first full framebuffer update straight from the machine's VNC endpoint over loopback TCP (no
 * gateway, no browser; ZRLE preferred, raw allowed); the tab's first frame is also printed as its multiple.
 *
 *   npm run build && npx tsx bench/connect.ts [runs (default 5)] [seconds per traffic sample (default 20)]
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchBrowser, startServer, type RunningServer } from '../e2e/harness';
import { buyer, canvasColours, statusOf, type Buyer } from '../e2e/tests/connect-helpers';
import { fmtBytes, fmtMs, percentile, ratio } from './stats';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.argv[2] ?? 5);
const SAMPLE_S = Number(process.argv[3] ?? 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DIRECT_SAMPLES = 3;

/**
 * Baseline: connect straight to a VNC server on loopback, complete the RFB handshake (security None), ask for a full
 * update (32 bpp true colour, encodings ZRLE then raw) and answer the time until that first FramebufferUpdate has
 * fully arrived, measured from the TCP connect.
 */
function directFirstFrame(port: number, timeoutMs = 10_000): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const s = connect({ host: '127.0.0.1', port });
    let buf = Buffer.alloc(0);
    let total = 0;
    let step: 'version' | 'security' | 'result' | 'init' | 'message' = 'version';
    const timer = setTimeout(() => fail(new Error('direct first frame timed out')), timeoutMs);
    const fail = (e: Error) => {
      clearTimeout(timer);
      s.destroy();
      reject(e);
    };
    /** Length of the FramebufferUpdate at the start of buf once it is complete, else null. */
    const updateLength = (): number | null => {
      if (buf.length < 4) return null;
      let o = 4;
      for (let n = buf.readUInt16BE(2); n > 0; n--) {
        if (buf.length < o + 12) return null;
        const [w, h, enc] = [buf.readUInt16BE(o + 4), buf.readUInt16BE(o + 6), buf.readInt32BE(o + 8)];
        o += 12;
        if (enc === 0) o += w * h * 4;
        else if (enc === 16) {
          if (buf.length < o + 4) return null;
          o += 4 + buf.readUInt32BE(o);
        } else throw new Error(`unexpected encoding ${enc}`);
      }
      return buf.length >= o ? o : null;
    };
    s.on('error', fail);
    s.on('data', (chunk: Buffer) => {
      total += chunk.length;
      buf = Buffer.concat([buf, chunk]);
      try {
        for (;;) {
          if (step === 'version') {
            if (buf.length < 12) return;
            buf = buf.subarray(12);
            s.write('RFB 003.008\n');
            step = 'security';
          } else if (step === 'security') {
            if (buf.length < 1 || buf.length < 1 + buf[0]!) return;
            if (buf[0] === 0 || !buf.subarray(1, 1 + buf[0]!).includes(1)) return fail(new Error('no "None" security type'));
            buf = buf.subarray(1 + buf[0]!);
            s.write(Buffer.from([1]));
            step = 'result';
          } else if (step === 'result') {
            if (buf.length < 4) return;
            if (buf.readUInt32BE(0) !== 0) return fail(new Error('security handshake failed'));
            buf = buf.subarray(4);
            s.write(Buffer.from([1])); // ClientInit: shared
            step = 'init';
          } else if (step === 'init') {
            if (buf.length < 24 || buf.length < 24 + buf.readUInt32BE(20)) return;
            const [w, h] = [buf.readUInt16BE(0), buf.readUInt16BE(2)];
            buf = buf.subarray(24 + buf.readUInt32BE(20));
            const pf = Buffer.alloc(20); // SetPixelFormat: 32 bpp, depth 24, little-endian true colour
            Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0]).copy(pf, 4);
            const enc = Buffer.from([2, 0, 0, 2, 0, 0, 0, 16, 0, 0, 0, 0]); // SetEncodings: ZRLE, raw
            const req = Buffer.from([3, 0, 0, 0, 0, 0, w >> 8, w & 255, h >> 8, h & 255]); // full update request
            s.write(Buffer.concat([pf, enc, req]));
            step = 'message';
          } else {
            if (buf.length < 1) return;
            const type = buf[0];
            if (type === 0) {
              const len = updateLength();
              if (len === null) return;
              clearTimeout(timer);
              s.destroy();
              return resolve({ ms: performance.now() - t0, bytes: total });
            } else if (type === 2) buf = buf.subarray(1); // Bell
            else if (type === 3) {
              if (buf.length < 8 || buf.length < 8 + buf.readUInt32BE(4)) return; // ServerCutText
              buf = buf.subarray(8 + buf.readUInt32BE(4));
            } else if (type === 1) {
              if (buf.length < 6 || buf.length < 6 + 6 * buf.readUInt16BE(4)) return; // SetColourMapEntries
              buf = buf.subarray(6 + 6 * buf.readUInt16BE(4));
            } else return fail(new Error(`unexpected server message ${type}`));
          }
        }
      } catch (e) {
        fail(e as Error);
      }
    });
  });
}

/** The machine's VNC port on loopback, as the local provider records it. */
function vncPort(server: RunningServer, machineId: string): number {
  return (JSON.parse(readFileSync(path.join(server.dataDir, 'machines', machineId, 'state.json'), 'utf8')) as { port: number }).port;
}

async function relayed(base: string): Promise<{ toClient: number; toMachine: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (dir: string) => Number(new RegExp(`hyperdesk_connect_bytes_relayed_total\\{direction="${dir}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { toClient: read('to_client'), toMachine: read('to_machine') };
}

async function until(fn: () => Promise<boolean>, what: string, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

interface Run {
  online: number;
  /** The first framebuffer update painted in the tab (opaque pixels on the canvas). */
  frame: number;
  /** The desktop's content drawn (the xterm window: several colours), which also waits for the desktop's apps. */
  content: number;
  /** Inside the tab, from its navigation start: the app signed in again, the ticket answered, the first frame. */
  tab: { refreshed: number; ticket: number; frame: number };
}

/** In the tab: a sample of the canvas has at least `min` distinct opaque colours (none before the first frame). */
function painted(min: number): boolean {
  const c = document.querySelector<HTMLCanvasElement>('[data-testid="desktop"] canvas');
  if (!c || !c.width) return false;
  const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
  const seen = new Set<number>();
  for (let i = 0; i < d.length && seen.size < min; i += 4 * 997) if (d[i + 3] === 255) seen.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
  return seen.size >= min;
}

/** Start Machine click → 'Online' on the dashboard (pushed) → Connect click → first frame, then content, in the tab. */
async function startToFrame(b: Buyer): Promise<{ run: Run; tab: Page }> {
  const card = b.page.getByRole('article');
  await card.getByRole('button', { name: 'Start Machine' }).waitFor({ timeout: 60_000 });
  const t0 = performance.now();
  await card.getByRole('button', { name: 'Start Machine' }).click();
  await card.getByText('Online', { exact: true }).waitFor({ timeout: 120_000 });
  const online = performance.now() - t0;
  const [tab] = await Promise.all([b.context.waitForEvent('page'), card.getByRole('button', { name: 'Connect' }).click()]);
  await tab.waitForFunction(painted, 1, { polling: 'raf', timeout: 60_000 });
  const frame = performance.now() - t0;
  // (no named helpers inside evaluate: tsx would wrap them in a __name call the page does not have)
  const inTab = await tab.evaluate(() => {
    const entries = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
    return {
      refreshed: entries.find((e) => e.name.includes('/v1/auth/refresh'))?.responseEnd ?? NaN,
      ticket: entries.find((e) => e.name.includes('/v1/slot/connect/ticket'))?.responseEnd ?? NaN,
      frame: performance.now(),
    };
  });
  await tab.waitForFunction(painted, 4, { polling: 'raf', timeout: 60_000 });
  return { run: { online, frame, content: performance.now() - t0, tab: inTab }, tab };
}

async function stop(server: RunningServer, b: Buyer, tab: Page) {
  await tab.close();
  await b.page.getByRole('article').getByRole('button', { name: 'Stop' }).click();
  await until(async () => (await statusOf(server.base, b.token, b.machineId)) === 'offline', 'the machine to stop');
}

async function traffic(server: RunningServer, tab: Page, typing: boolean): Promise<{ down: number; up: number }> {
  const before = await relayed(server.base);
  const t0 = performance.now();
  if (typing) {
    const box = (await tab.locator('[data-testid="desktop"] canvas').boundingBox())!;
    await tab.mouse.click(box.x + box.width * 0.25, box.y + box.height * 0.3);
    const line = 'echo the quick brown fox jumps over the lazy dog 0123456789';
    while (performance.now() - t0 < SAMPLE_S * 1000) {
      await tab.keyboard.type(line, { delay: 60 }); // about 16 characters a second, a brisk typist
      await tab.keyboard.press('Enter');
    }
  } else await sleep(SAMPLE_S * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const after = await relayed(server.base);
  return { down: (after.toClient - before.toClient) / seconds, up: (after.toMachine - before.toMachine) / seconds };
}

async function main() {
  if (!existsSync(path.join(ROOT, 'web/dist/index.html'))) {
    console.error('web/dist is missing: run `npm run build` first.');
    process.exit(1);
  }
  const server = await startServer({ LOG_LEVEL: 'error' });
  const browser = await launchBrowser();
  try {
    const b = await buyer(browser, server.base, 'Bench User');
    await b.page.goto(`${server.base}/dashboard`);
    const runs: Run[] = [];
    const direct: { ms: number; bytes: number }[] = [];
    let tab: Page | null = null;
    for (let i = 0; i < RUNS; i++) {
      const r = await startToFrame(b);
      runs.push(r.run);
      const port = vncPort(server, b.machineId);
      const mine: number[] = [];
      for (let j = 0; j < DIRECT_SAMPLES; j++) {
        const d = await directFirstFrame(port);
        direct.push(d);
        mine.push(d.ms);
      }
      console.log(
        `run ${i + 1}: online ${fmtMs(r.run.online)}, first frame ${fmtMs(r.run.frame)}, content ${fmtMs(r.run.content)}; ` +
          `direct first frame ${mine.map(fmtMs).join(', ')}`,
      );
      if (i < RUNS - 1) await stop(server, b, r.tab);
      else tab = r.tab;
    }
    await tab!.locator('main[data-phase="connected"]').waitFor();
    if ((await canvasColours(tab!)) < 4) throw new Error('the desktop is blank');
    await sleep(3000); // let the first full frame and the initial updates pass
    const idle = await traffic(server, tab!, false);
    const typing = await traffic(server, tab!, true);

    const row = (label: string, xs: number[]) =>
      console.log(`${label.padEnd(46)} p50 ${fmtMs(percentile(xs, 50)).padStart(8)}   p95 ${fmtMs(percentile(xs, 95)).padStart(8)}   n=${xs.length}`);
    const rate = (n: number) => `${fmtBytes(Math.round(n))}/s (${((n * 8) / 1000).toFixed(1)} kbit/s)`;
    console.log(`\nConnect on the local provider, ${RUNS} runs (Chromium ${browser.version()})\n`);
    row('Start click → Online on the dashboard', runs.map((r) => r.online));
    row('Online → first desktop frame in the tab', runs.map((r) => r.frame - r.online));
    row('Start click → first desktop frame', runs.map((r) => r.frame));
    row('Start click → desktop content (xterm) drawn', runs.map((r) => r.content));
    console.log('\nInside the connect tab, from its navigation start');
    row('  app loaded and signed in (refresh answered)', runs.map((r) => r.tab.refreshed));
    row('  ticket answered', runs.map((r) => r.tab.ticket));
    row('  first frame painted (noVNC, WebSocket, RFB)', runs.map((r) => r.tab.frame));
    const directP50 = percentile(direct.map((d) => d.ms), 50);
    console.log('\nBaseline: straight to the machine\'s VNC endpoint (loopback TCP, no gateway, no browser)');
    row('  connect → RFB handshake → first full update', direct.map((d) => d.ms));
    console.log(`${'  bytes received up to that first update'.padEnd(46)} p50 ${fmtBytes(percentile(direct.map((d) => d.bytes), 50)).padStart(8)}`);
    console.log(`${'  first frame in the tab p50 / direct p50'.padEnd(46)} ${ratio(percentile(runs.map((r) => r.tab.frame), 50), directP50)}   (tab: from its navigation start)`);
    console.log(`${'  Online → first frame p50 / direct p50'.padEnd(46)} ${ratio(percentile(runs.map((r) => r.frame - r.online), 50), directP50)}   (from Online on the dashboard: Connect click, new tab)`);
    console.log(`\nRelayed by the gateway (${SAMPLE_S} s samples, 1280×800 desktop)`);
    console.log(`${'idle desktop'.padEnd(46)} to browser ${rate(idle.down).padStart(28)}   to machine ${rate(idle.up)}`);
    console.log(`${'typing in xterm (~16 chars/s)'.padEnd(46)} to browser ${rate(typing.down).padStart(28)}   to machine ${rate(typing.up)}`);
    console.log(`\nThe spec's minimum link is 2 Mbit/s: typing uses ${((typing.down * 8) / 2_000_000 * 100).toFixed(1)}% of it.`);
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
