/**
 * Landing page at the spec's minimum connection: loads / in Chromium with DevTools network emulation (2 Mbps down,
 * 100 ms round trip, cold cache) and reports LCP, total bytes and JS bytes (as transferred and gzip-compressed).
 *
 *   npm run build && npx tsx bench/landing.ts [runs] [--gzip]
 *
 * --gzip puts a compressing HTTP proxy in front of the server, to show what HTTP compression of the assets would
 * change (the figures are then labelled as such).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { launchBrowser, startServer } from '../e2e/harness';
import { fmtBytes, fmtMs, percentile } from './stats';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ARGS = process.argv.slice(2);
const RUNS = Number(ARGS.find((a) => /^\d+$/.test(a)) ?? 3);
const GZIP = ARGS.includes('--gzip');
const DOWN_BPS = 2_000_000;
const RTT_MS = 100;
const LCP_GOAL_MS = 2000;
const JS_BUDGET_GZIP = 120 * 1024;

interface Run {
  lcp: number;
  fcp: number;
  load: number;
  totalBytes: number;
  jsBytes: number;
  jsFiles: string[];
  lcpElement: string;
}

async function main() {
  if (!existsSync(path.join(ROOT, 'web/dist/index.html'))) {
    console.error('web/dist is missing: run `npm run build` first.');
    process.exit(1);
  }
  const server = await startServer({ LOG_LEVEL: 'error' });
  const browser = await launchBrowser();
  const proxy = GZIP ? await gzipProxy(server.base) : null;
  const base = proxy?.base ?? server.base;
  const runs: Run[] = [];
  try {
    for (let i = 0; i < RUNS; i++) runs.push(await loadOnce(browser, base));
    const jsGzip = await gzipTotal(server.base, runs[0]!.jsFiles);
    report(runs, jsGzip);
  } finally {
    proxy?.server.close();
    await browser.close();
    await server.close();
  }
}

async function loadOnce(browser: Awaited<ReturnType<typeof launchBrowser>>, base: string): Promise<Run> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    const w = window as unknown as { __lcp: { time: number; el: string } };
    w.__lcp = { time: 0, el: '' };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as (PerformanceEntry & { element?: Element })[]) {
        w.__lcp = { time: e.startTime, el: e.element ? `${e.element.tagName.toLowerCase()}${e.element.id ? '#' + e.element.id : ''}` : '?' };
      }
    }).observe({ type: 'largest-contentful-paint', buffered: true });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: RTT_MS,
    downloadThroughput: DOWN_BPS / 8,
    uploadThroughput: DOWN_BPS / 8,
  });
  const types = new Map<string, { type: string; url: string }>();
  const sizes = new Map<string, number>();
  cdp.on('Network.responseReceived', (e) => types.set(e.requestId, { type: e.type, url: e.response.url }));
  cdp.on('Network.loadingFinished', (e) => sizes.set(e.requestId, e.encodedDataLength));

  await page.goto(`${base}/`, { waitUntil: 'load', timeout: 60_000 });
  await page.getByRole('heading', { level: 1 }).waitFor({ timeout: 60_000 });
  await page.waitForLoadState('networkidle', { timeout: 60_000 });
  const metrics = await page.evaluate(() => {
    const w = window as unknown as { __lcp: { time: number; el: string } };
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0;
    return { lcp: w.__lcp.time, el: w.__lcp.el, fcp, load: nav.loadEventEnd };
  });
  let totalBytes = 0;
  let jsBytes = 0;
  const jsFiles: string[] = [];
  for (const [id, size] of sizes) {
    totalBytes += size;
    const t = types.get(id);
    if (t?.type === 'Script') {
      jsBytes += size;
      jsFiles.push(new URL(t.url).pathname);
    }
  }
  await context.close();
  return { lcp: metrics.lcp, fcp: metrics.fcp, load: metrics.load, totalBytes, jsBytes, jsFiles: jsFiles.sort(), lcpElement: metrics.el };
}

/** What the landing page's JS weighs gzip-compressed (level 9), whether or not the server compresses. */
async function gzipTotal(base: string, files: string[]): Promise<number> {
  let total = 0;
  for (const f of files) total += gzipSync(Buffer.from(await (await fetch(base + f)).arrayBuffer()), { level: 9 }).length;
  return total;
}

/** Forwards to the app and gzips text answers (what @fastify/compress or a CDN would do). */
async function gzipProxy(target: string): Promise<{ base: string; server: Server }> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const up = httpRequest({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: { ...req.headers, host: t.host, 'accept-encoding': 'identity' } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        let body = Buffer.concat(chunks);
        const headers = { ...r.headers };
        if (/javascript|css|html|json|svg/.test(String(r.headers['content-type'])) && /gzip/.test(String(req.headers['accept-encoding']))) {
          body = gzipSync(body, { level: 6 });
          headers['content-encoding'] = 'gzip';
          headers['content-length'] = String(body.length);
        }
        res.writeHead(r.statusCode ?? 502, headers);
        res.end(body);
      });
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

function report(runs: Run[], jsGzip: number) {
  const med = (pick: (r: Run) => number) => percentile(runs.map(pick), 50);
  const first = runs[0]!;
  const via = GZIP ? ' through a gzip proxy (what HTTP compression would give)' : '';
  console.log(`Landing page at ${DOWN_BPS / 1e6} Mbps down, ${RTT_MS} ms RTT, cold cache${via}, ${runs.length} runs (median):`);
  console.log(`  LCP                ${fmtMs(med((r) => r.lcp))}  (goal ≤ ${fmtMs(LCP_GOAL_MS)}; element ${first.lcpElement}; runs: ${runs.map((r) => fmtMs(r.lcp)).join(', ')})`);
  console.log(`  FCP                ${fmtMs(med((r) => r.fcp))}`);
  console.log(`  load event         ${fmtMs(med((r) => r.load))}`);
  console.log(`  total transferred  ${fmtBytes(med((r) => r.totalBytes))}`);
  console.log(`  JS transferred     ${fmtBytes(med((r) => r.jsBytes))} in ${first.jsFiles.length} files`);
  console.log(`  JS gzip (level 9)  ${fmtBytes(jsGzip)}  (budget ${fmtBytes(JS_BUDGET_GZIP)}: ${((jsGzip / JS_BUDGET_GZIP) * 100).toFixed(0)}% used)`);
  console.log(`  JS files           ${first.jsFiles.join(' ')}`);
  const lcpOk = med((r) => r.lcp) <= LCP_GOAL_MS;
  console.log(`  verdict            LCP ${lcpOk ? 'within' : 'OVER'} goal; JS ${jsGzip <= JS_BUDGET_GZIP ? 'within' : 'OVER'} budget`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
