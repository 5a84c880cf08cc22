/**
 * Server start-up before and after the compiled build (issue 14.2): spawn → first 200 from /readyz, and the
 * process's memory (RSS when ready, and its peak VmHWM), for
 *   tsx   `node --import tsx server/src/main.ts` (TypeScript compiled at run time; tsx's cache warm)
 *   node  `node --enable-source-maps server/dist/main.js` (what `npm start` runs now)
 * each as a first start (empty database: migrations, keys) and as a restart on that data; on the embedded PGlite, or
 * with --pg on a fresh database on DATABASE_URL's server (which isolates the loader from PGlite's own start-up).
 *
 *   npm run bench:startup [runs (default 5)] [--pg]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildServerOnce, freePort, SERVER_COMMAND } from '../e2e/harness';
import { fmtBytes, fmtMs, percentile, ratio } from './stats';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ARGS = process.argv.slice(2);
const RUNS = Number(ARGS.find((a) => /^\d+$/.test(a)) ?? 5);
const PG = ARGS.includes('--pg') ? process.env.DATABASE_URL : undefined;
if (ARGS.includes('--pg') && !PG) throw new Error('--pg needs DATABASE_URL');
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
async function startOnce(variant: Variant, dataDir: string, databaseUrl?: string): Promise<Start> {
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
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

/** A first start on an empty data dir (and database), then a restart on the same data. */
async function run(variant: Variant): Promise<{ first: Start; restart: Start }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `hd-bench-startup-${variant}-`));
  const db = PG ? await freshPgDatabase(PG) : undefined;
  try {
    const first = await startOnce(variant, dataDir, db?.url);
    const restart = await startOnce(variant, dataDir, db?.url);
    return { first, restart };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await db?.drop();
  }
}

async function freshPgDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hd_bench_startup_${randomBytes(5).toString('hex')}`;
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(q);
    } finally {
      await c.end();
    }
  };
  await admin(`create database ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
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
  console.log(`\nServer start-up on ${PG ? 'PostgreSQL' : 'PGlite'}, ${RUNS} runs each (median; ready = spawn → /readyz answers 200)\n`);
  console.log('| start | runner | ready (median) | ready (min–max) | RSS when ready | peak RSS |');
  console.log('|---|---|---|---|---|---|');
  for (const kind of ['first', 'restart'] as const) {
    for (const v of ['tsx', 'node'] as const) {
      const label = kind === 'first' ? 'first (empty database)' : 'restart';
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
