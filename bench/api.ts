/**
 * API read path (issues 14 and 23): GET /v1/user/wallet/balance on the server as production runs it, on PostgreSQL
 * (DATABASE_URL: a fresh database on that server) and on PGlite.
 *
 * The product is the compiled server started as `npm start` starts it (scripts/build-server.mjs, then
 * scripts/run-server.sh: `node --enable-source-maps server/dist/main.js`) in its own process, configured as in
 * production (LOG_LEVEL unset: info, one JSON line per request received and answered, every background job running,
 * the lxd provider: run as root, run-server.sh prepares LXD for the data dir and runs node as `hyperdesk`). Its stdout is
 * a pipe this process reads and parses line by line, as a log collector would. The baseline, also in its own process
 * and started the same way (bench/api-baseline.ts, bundled, plain node), is a bare Fastify handler making ONE
 * comparable query (the user's machines joined with a ledger sum) through the product's database client, on the same
 * database (PGlite allows one process per data dir: the baseline reads a copy of the seeded one).
 * Load comes from other processes: autocannon (max rps, 50 connections) and bench/paced.ts (p50/p99 at 1,000 rps
 * offered, evenly paced over 50 connections after a warm-up second, each latency from the request's due time; the
 * p99 with the warm-up second counted is printed beside it).
 *
 * Scenarios: (a) a new user who signed up and bought a 10-hour pack through the running server's HTTP API
 * (bench/seed-http.ts: sign-up with the captcha solved, the built-in checkout paid with the test card); seeded through
 * the database before the servers start: (b) a single user after 100 hours of metered minutes (6,000 debit rows, one
 * per minute as metering writes them), (c) an instructor with a 40-machine course after 20 hours per machine (48,000
 * rows), and the baseline's user, a twin of (a) (one machine, one lot), then a vacuum and fresh statistics. (Without
 * statistics, as in a young deployment, PostgreSQL planned the balance statement anew on every read until the server
 * forced its generic plan, issue 23; left without them here, the bare query, planned without them, cost 10 ms of
 * PostgreSQL's CPU per request.) The four targets are measured in interleaved rounds and each figure is the median
 * over the rounds; the server's CPU (share of one core) is read from /proc for each run, and on
 * PostgreSQL the CPU its backends for the bench's database spent per request (PostgreSQL on this host). The host's
 * load average is printed with each round: this host is shared. Then the metering tick for 40 online machines, in
 * this process, once the servers have stopped.
 *
 *   npm run bench:api [seconds per run (default 5)] [rounds (default 3)]
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database, type Db } from '../server/src/db/client';
import { migrate } from '../server/src/db/migrate';
import { freshDatabase } from '../server/test/harness';
import { removeProject } from '../server/test/lxd-fixtures';
import { lxdProjectFor } from '../server/src/config';
import { manualClock, systemClock } from '../server/src/lib/clock';
import { createTokens, type Principal } from '../server/src/modules/identity/tokens';
import { createLedger } from '../server/src/modules/ledger/service';
import { createMetering } from '../server/src/modules/machines/metering';
import { fulfilCourseOrder } from '../server/src/modules/courses/fulfil';
import { seedCourseOrder, seedUser } from '../server/src/modules/courses/fixtures/seed';
import { freePort } from '../e2e/harness';
import { buyPack, signIn, signUp } from './seed-http';
import { fmtMs, percentile, ratio } from './stats';
import { runOnEachDatabase } from './each-database';
import { childEnv, ROOT, SERVER_COMMAND, startProcess, type Collected, type Proc } from './server-process';

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
const DAY = 86_400_000;
const run = promisify(execFile);
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const PACED = path.join(ROOT, 'bench/paced.ts');
const BASELINE_JS = path.join(ROOT, 'bench/dist/api-baseline.js');
const CLOCK_TICKS = 100; // USER_HZ: the unit of utime/stime in /proc/<pid>/stat

interface Load {
  rps: number;
  /** Requests answered in the run. */
  requests: number;
  p50: number;
  p99: number;
  /** Paced runs: the p99 with the warm-up second's requests counted too. */
  p99Cold?: number;
  errors: number;
  /** The server process's CPU while it ran, in cores (1 = one core busy all the time). */
  cpu: number;
  /** PostgreSQL's CPU per request (its backends for the bench's database), in ms; NaN when not measured. */
  pgMs: number;
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU seconds of each process in `pids` that is still there. */
function cpuOf(pids: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const pid of pids) {
    try {
      m.set(pid, cpuSeconds(pid));
    } catch {
      // ended meanwhile
    }
  }
  return m;
}

/** PostgreSQL's backends for one database (their pids, read from /proc when PostgreSQL runs on this host). */
type Backends = () => Promise<number[]>;

/**
 * Runs `load` and reads how much CPU the process `pid` used meanwhile, per second of wall time, and how much the
 * database's backends used per request (a backend that started meanwhile counts from zero).
 */
async function withCpu(pid: number, backends: Backends | undefined, load: () => Promise<Omit<Load, 'cpu' | 'pgMs'>>): Promise<Load> {
  const pg0 = backends ? cpuOf(await backends()) : undefined;
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const r = await load();
  const cpu = (cpuSeconds(pid) - cpu0) / ((performance.now() - t0) / 1000);
  let pgMs = NaN;
  if (backends && pg0) {
    let spent = 0;
    for (const [p, s] of cpuOf(await backends())) spent += s - (pg0.get(p) ?? 0);
    pgMs = (spent * 1000) / Math.max(1, r.requests);
  }
  return { ...r, cpu, pgMs };
}

/** Max rps: autocannon in its own process, 50 connections, as fast as the server answers. */
async function cannon(url: string, headers: Record<string, string>): Promise<Omit<Load, 'cpu' | 'pgMs'>> {
  const args = [AUTOCANNON, '-c', '50', '-d', String(SECONDS), '-j'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const { stdout } = await run(process.execPath, [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, requests: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/** Latency at 1,000 rps offered, evenly paced over 50 connections (bench/paced.ts, its own process). */
async function paced(url: string, headers: Record<string, string>): Promise<Omit<Load, 'cpu' | 'pgMs'>> {
  const args = ['--import', 'tsx', PACED, url, '1000', String(SECONDS), '50', JSON.stringify(headers)];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1024 * 1024 });
  const r = JSON.parse(stdout) as Omit<Load, 'cpu' | 'pgMs' | 'requests'>;
  return { ...r, requests: 1000 * (SECONDS + 1) }; // the warm-up second's requests too (CPU per request)
}

interface Measured {
  max: Load;
  at1000: Load;
}

interface Target {
  url: string;
  pid: number;
  /** Headers for this round (id tokens are signed again each round: they live 15 minutes). */
  headers(): Promise<Record<string, string>>;
}

/**
 * Every target measured in ROUNDS interleaved rounds (max rps, then 1,000 rps offered); the median of each figure.
 * Prints the host's load average at the start of each round.
 */
async function measureInRounds(kind: string, targets: Target[], backends?: Backends): Promise<Measured[]> {
  const runs: Measured[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    console.log(`${kind.padEnd(8)} round ${round + 1}/${ROUNDS}: load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    for (const [i, t] of targets.entries()) {
      const headers = await t.headers();
      const max = await withCpu(t.pid, backends, () => cannon(t.url, headers));
      const at1000 = await withCpu(t.pid, backends, () => paced(t.url, headers));
      runs[i]!.push({ max, at1000 });
    }
  }
  const median = (xs: number[]) => percentile(xs, 50);
  const pick = (ms: Measured[], key: 'max' | 'at1000'): Load => ({
    rps: median(ms.map((m) => m[key].rps)),
    requests: median(ms.map((m) => m[key].requests)),
    pgMs: median(ms.map((m) => m[key].pgMs)),
    p50: median(ms.map((m) => m[key].p50)),
    p99: median(ms.map((m) => m[key].p99)),
    p99Cold: median(ms.map((m) => m[key].p99Cold ?? NaN)),
    cpu: median(ms.map((m) => m[key].cpu)),
    errors: ms.reduce((n, m) => n + m[key].errors, 0),
  });
  return runs.map((ms) => ({ max: pick(ms, 'max'), at1000: pick(ms, 'at1000') }));
}

/** One minute per row for `minutes` minutes on each machine, keyed like metering (`meter:<machine>:<minute>`). */
async function meterHistory(db: Db, machineIds: string[], minutes: number) {
  for (const id of machineIds) {
    await db.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
      select gen_random_uuid(), l.machine_id, 'debit', -1, l.id, 'meter:' || l.machine_id || ':' || g, 'runtime'
      from ledger_entries l cross join generate_series(1::int, ${minutes}::int) g where l.machine_id = ${id}::uuid and l.kind = 'credit'`);
  }
}

interface Seeded {
  /** The baseline's user: a twin of (a), one machine with one lot. */
  twin: Principal;
  used: Principal;
  teacher: Principal;
  courseId: string;
  sign(p: Principal): Promise<string>;
}

/**
 * Scenarios (b) and (c) and the baseline's user, written through the database as the product writes them. After a
 * history written in one statement per machine, a vacuum brings the tables to the state minute-by-minute metering
 * leaves them in (each debit in its own transaction: pages pruned as it goes, autovacuum keeping up) and refreshes
 * the planner's statistics.
 */
async function seed(database: Database): Promise<Seeded> {
  const db = database.db;
  const ledger = createLedger(db);
  const now = Date.now();
  const expires = new Date(now + 30 * DAY);
  const single = async () => {
    const u = await seedUser(db);
    const id = (await db.execute(sql`insert into machines (id, owner_user_id, name, region, platform)
      values (gen_random_uuid(), ${u.uid}::uuid, 'UE-UK', 'UK', 'Unreal Engine') returning id`)).rows[0]!.id as string;
    await ledger.credit(db, { machineId: id, minutes: 150 * 60, expiresAt: expires, key: `bench:${id}` });
    return { u, id };
  };
  const twin = await single();
  const used = await single(); // (b): a single user after 100 hours of metered minutes
  await meterHistory(db, [used.id], 100 * 60);
  const teacher = await seedUser(db, { instructor: true });
  const startAt = new Date(now - DAY);
  const orderId = await seedCourseOrder(db, { userId: teacher.uid, vms: 40, hours: 25, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await db.transaction((tx) => fulfilCourseOrder(tx, ledger, { id: orderId }));
  const courseMachines = (await db.execute(sql`select id from machines where course_id = ${courseId}::uuid order by seq`)).rows.map((r) => String(r.id));
  await meterHistory(db, courseMachines, 20 * 60);
  await db.execute(sql`vacuum analyze`);
  // The deployment's signing key (created here, on first use, as the server would): the server verifies these tokens.
  const tokens = await createTokens(db, systemClock);
  return { twin: twin.u, used: used.u, teacher, courseId, sign: (p) => tokens.sign(p) };
}

/** The compiled server (as npm start builds it) and the baseline, bundled the same way. */
async function buildServers() {
  await run(process.execPath, [path.join(ROOT, 'scripts/build-server.mjs')], { cwd: ROOT });
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['bench/api-baseline.ts'],
    outfile: BASELINE_JS,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [
      {
        // Packages stay imports from node_modules, except the workspace's own (TypeScript sources), as for the server.
        name: 'external-packages',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@hyperdesk/') ? undefined : { path: args.path, external: true }));
        },
      },
    ],
  });
}

async function bench(kind: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hd-bench-api-'));
  const baselineDir = mkdtempSync(path.join(tmpdir(), 'hd-bench-api-baseline-'));
  let database: Database | undefined;
  let url: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  let server: Proc | undefined;
  let baseline: Proc | undefined;
  // Whatever happens, what the bench made goes: the servers, the database, the deployment's LXD project, the dirs.
  const cleanUp = async () => {
    await server?.stop();
    await baseline?.stop();
    await (kind === 'postgres' ? drop?.() : database?.close());
    database = undefined;
    removeProject(lxdProjectFor(dataDir));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(baselineDir, { recursive: true, force: true });
  };
  try {
    if (kind === 'postgres') {
      const fresh = await freshDatabase();
      database = fresh.database;
      url = fresh.url;
      drop = fresh.drop;
    } else {
      database = await openDatabase({ dataDir });
      await migrate(database);
    }
    const seeded = await seed(database);
    if (kind === 'pglite') {
      await database.close(); // the server takes the data dir; the baseline gets a copy
      database = undefined;
      cpSync(path.join(dataDir, 'pglite'), path.join(baselineDir, 'pglite'), { recursive: true });
    }

    const serverPort = await freePort();
    const base = `http://127.0.0.1:${serverPort}`;
    server = await startProcess(
      'server',
      SERVER_COMMAND,
      childEnv({ DATABASE_URL: url, DATA_DIR: dataDir, PORT: String(serverPort), HOST: '127.0.0.1', PUBLIC_URL: base }),
      serverPort,
      '/readyz',
    );
    // (a): signs up and buys a 10-hour pack through the server's API, as a browser would.
    const buyer = await signUp(base);
    await buyPack(base, buyer.token, 'uk-unreal-10h');
    const baselinePort = await freePort();
    baseline = await startProcess(
      'baseline',
      [process.execPath, '--enable-source-maps', BASELINE_JS],
      childEnv({ DATABASE_URL: url, DATA_DIR: kind === 'pglite' ? baselineDir : undefined, PORT: String(baselinePort), BENCH_USER: seeded.twin.uid }),
      baselinePort,
      '/bare',
    );
    const balance = `${base}/v1/user/wallet/balance`;
    const as = (p: Principal) => async () => ({ idtoken: await seeded.sign(p) });
    // On PostgreSQL on this host: the backends of the bench's database (the server's and the baseline's).
    const own = database;
    const backends: Backends | undefined = own
      ? async () =>
          (await own.rows<{ pid: number }>(sql`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).map((r) => Number(r.pid))
      : undefined;
    const results = await measureInRounds(
      kind,
      [
        { url: `http://127.0.0.1:${baselinePort}/bare`, pid: baseline.pid, headers: async () => ({}) },
        { url: balance, pid: server.pid, headers: async () => ({ idtoken: await signIn(base, buyer) }) },
        { url: balance, pid: server.pid, headers: as(seeded.used) },
        { url: balance, pid: server.pid, headers: as(seeded.teacher) },
      ],
      backends,
    );
    await server.stop();
    await baseline.stop();

    // Metering tick, 40 online machines (each already 20 h into its hours): one pass after a minute has begun.
    database ??= await openDatabase({ dataDir });
    const db = database.db;
    const onlineSince = new Date(Date.now() - 30_000);
    await db.execute(sql`update machines set desired = 'running', observed = 'online', online_since = ${onlineSince.toISOString()}::timestamptz where course_id = ${seeded.courseId}::uuid`);
    const tickClock = manualClock(new Date());
    const metering = createMetering({ db, ledger: createLedger(db), clock: tickClock, log: console, stop: async () => {} });
    const ticks: number[] = [];
    for (let i = 0; i < 5; i++) {
      tickClock.set(new Date(onlineSince.getTime() + i * 60_000 + 1000));
      const t = performance.now();
      await metering.runOnce();
      ticks.push(performance.now() - t);
    }
    const n = Number((await db.execute(sql`select count(*) as n from ledger_entries`)).rows[0]!.n);
    report(kind, results as [Measured, Measured, Measured, Measured], server.log, ticks, n);
  } finally {
    await cleanUp();
  }
}

function report(kind: string, results: [Measured, Measured, Measured, Measured], log: Collected, ticks: number[], n: number) {
  const [bare, a, b, c] = results;
  const pct = (cores: number) => `${(cores * 100).toFixed(0)}%`;
  const pg = (ms: number) => (Number.isFinite(ms) ? `, PostgreSQL ${ms.toFixed(3)} ms/request` : '');
  const line = (name: string, r: Measured) =>
    `${kind.padEnd(8)} ${name.padEnd(34)} ${r.max.rps.toFixed(0).padStart(6)} rps (${ratio(r.max.rps, bare.max.rps)} of bare, p50 ${r.max.p50} ms, p99 ${r.max.p99} ms, cpu ${pct(r.max.cpu)}${pg(r.max.pgMs)})` +
    `  @1000: p50 ${r.at1000.p50.toFixed(2)} ms, p99 ${r.at1000.p99.toFixed(2)} ms (${ratio(r.at1000.p99, bare.at1000.p99)} of bare; ${r.at1000.p99Cold?.toFixed(2)} ms with the warm-up second, cpu ${pct(r.at1000.cpu)}${pg(r.at1000.pgMs)})` +
    (r.max.errors + r.at1000.errors ? `  ERRORS ${r.max.errors + r.at1000.errors}` : '');
  console.log(line('bare Fastify, one query', bare));
  console.log(line('(a) balance, signed up + bought (HTTP)', a));
  console.log(line('(b) balance, after 100 h metered', b));
  console.log(line('(c) balance, instructor 40 × 20 h', c));
  const goal = (r: Measured) => r.max.rps >= 0.5 * bare.max.rps && r.at1000.p99 < 25;
  console.log(
    `${kind.padEnd(8)} goals (≥ 0.5× bare rps, p99 < 25 ms at 1,000 rps): ${[a, b, c].map((r, i) => `(${'abc'[i]}) ${goal(r) ? 'met' : 'MISSED'}`).join(', ')}`,
  );
  console.log(
    `${kind.padEnd(8)} server's log as collected: ${log.lines} lines, ${(log.bytes / 1024 / 1024).toFixed(1)} MiB, ${log.warnings} warnings or errors` +
      (log.warned.length ? ` (${log.warned.join('; ')})` : ''),
  );
  console.log(`${kind.padEnd(8)} metering tick, 40 online machines: first ${fmtMs(ticks[0]!)}, then p50 ${fmtMs(percentile(ticks.slice(1), 50))} (${n} ledger rows)`);
}

let built: Promise<void> | undefined;
async function main(kind: string) {
  if (!built) {
    built = buildServers();
    await built;
    console.log(
      `server: sh scripts/run-server.sh → node --enable-source-maps server/dist/main.js in its own process, LOG_LEVEL=${process.env.LOG_LEVEL ?? 'info (default)'}, ` +
        `stdout piped to this bench's log collector, the lxd provider (the read touches no machine); ` +
        `baseline: bench/dist/api-baseline.js in its own process; load: autocannon and bench/paced.ts in their own processes; ${SECONDS} s per run, medians of ${ROUNDS} rounds`,
    );
  }
  await built;
  await bench(kind);
}

runOnEachDatabase(main);
