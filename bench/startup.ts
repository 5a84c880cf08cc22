/**
 * Server start-up before and after the compiled build (issue 14.2): spawn → first 200 from /readyz, and the
 * process's memory (RSS when ready, and its peak VmHWM), for
 *   tsx   `node --import tsx server/src/main.ts` (TypeScript compiled at run time; tsx's cache warm)
 *   node  `node --enable-source-maps server/dist/main.js` (what `npm start` runs now)
 * each on the embedded PGlite, as a first start (empty data dir: migrations, keys) and as a restart on that data.
 *
 *   npm run bench:startup [runs (default 5)]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServerOnce, freePort, SERVER_COMMAND } from '../e2e/harness';
import { fmtBytes, fmtMs, percentile, ratio } from './stats';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.argv[2] ?? 5);
const VARIANTS = {
  tsx: [process.execPath, '--import', 'tsx', path.join(ROOT, 'server/src/main.ts')],
  node: [...SERVER_COMMAND],
} as const;
type Variant = keyof typeof VARIANTS;

interface Start {
  readyMs: number;
  rss: number;
  peak: number;
}

/** Spawns one server on `dataDir`, waits for /readyz, reads its memory, stops it with SIGTERM. */
async function startOnce(variant: Variant, dataDir: string): Promise<Start> {
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const [cmd, ...args] = VARIANTS[variant];
  const started = performance.now();
  const proc = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${variant} server exited:\n${err}`);
      if (performance.now() - started > 120_000) throw new Error(`${variant} server not ready in 120 s:\n${err}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const readyMs = performance.now() - started;
    const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) * 1024;
    return { readyMs, rss: kb('VmRSS'), peak: kb('VmHWM') };
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

/** A first start on an empty data dir, then a restart on the same data. */
async function run(variant: Variant): Promise<{ first: Start; restart: Start }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `hd-bench-startup-${variant}-`));
  try {
    const first = await startOnce(variant, dataDir);
    const restart = await startOnce(variant, dataDir);
    return { first, restart };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  await buildServerOnce();
  // Warm-up, not counted: tsx fills its transform cache, both fill the OS page cache.
  await run('tsx');
  await run('node');
  const results: Record<Variant, { first: Start; restart: Start }[]> = { tsx: [], node: [] };
  for (let i = 0; i < RUNS; i++) {
    // Interleaved, so load from other work on the machine falls on both alike.
    for (const v of ['tsx', 'node'] as const) results[v].push(await run(v));
    process.stdout.write(`run ${i + 1}/${RUNS} done\n`);
  }
  const med = (v: Variant, kind: 'first' | 'restart', key: keyof Start) => percentile(results[v].map((r) => r[kind][key]), 50);
  const range = (v: Variant, kind: 'first' | 'restart') => {
    const ms = results[v].map((r) => r[kind].readyMs);
    return `${fmtMs(Math.min(...ms))}–${fmtMs(Math.max(...ms))}`;
  };
  console.log(`\nServer start-up on PGlite, ${RUNS} runs each (median; ready = spawn → /readyz answers 200)\n`);
  console.log('| start | runner | ready (median) | ready (min–max) | RSS when ready | peak RSS |');
  console.log('|---|---|---|---|---|---|');
  for (const kind of ['first', 'restart'] as const) {
    for (const v of ['tsx', 'node'] as const) {
      const label = kind === 'first' ? 'first (empty data dir)' : 'restart';
      console.log(`| ${label} | ${v} | ${fmtMs(med(v, kind, 'readyMs'))} | ${range(v, kind)} | ${fmtBytes(med(v, kind, 'rss'))} | ${fmtBytes(med(v, kind, 'peak'))} |`);
    }
  }
  console.log('\nnode vs tsx (node ÷ tsx, lower is better):');
  for (const kind of ['first', 'restart'] as const) {
    console.log(
      `  ${kind.padEnd(7)}  ready ${ratio(med('node', kind, 'readyMs'), med('tsx', kind, 'readyMs'))}` +
        `  RSS ${ratio(med('node', kind, 'rss'), med('tsx', kind, 'rss'))}  peak ${ratio(med('node', kind, 'peak'), med('tsx', kind, 'peak'))}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
