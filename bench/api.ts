/**
 * API read path (issue 14): GET /v1/user/wallet/balance, loaded from a child process (so the load does not share
 * the server's event loop), on PostgreSQL (DATABASE_URL: a fresh database) and on PGlite.
 * Baseline in the same run and on the same database: a bare Fastify handler making ONE comparable query (the
 * user's machines joined with a ledger sum). Measured for (a) a fresh single user, (b) a user like (a) after
 * 100 hours of metered minutes (6,000 debit rows, written like metering writes them: one row per minute, the lot
 * remainder kept by the ledger's trigger), (c) an instructor with a 40-machine course after 20 hours per machine
 * (48,000 rows): max rps (autocannon, 50 connections), p50/p99 at 1,000 rps offered (evenly paced over 50
 * connections, from each request's due time: bench/paced.ts), and ratios. The four are measured side by side in
 * interleaved rounds and each figure is the median over the rounds (this machine's noise moves a single 8 s run's
 * p99 by ±50%). Also the metering tick for 40 online machines.
 *
 *   npm run bench:api [seconds per run (default 5)] [rounds (default 3)]
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { sql } from 'drizzle-orm';
import { buildApp } from '../server/src/app';
import { freshDatabase, testConfig } from '../server/test/harness';
import { manualClock } from '../server/src/lib/clock';
import { createMetering } from '../server/src/modules/machines/metering';
import { seedCourseOrder, seedUser } from '../server/src/modules/courses/fixtures/seed';
import { fmtMs, percentile, ratio } from './stats';
import { runOnEachDatabase } from './each-database';

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
const DAY = 86_400_000;
const run = promisify(execFile);
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const PACED = fileURLToPath(new URL('./paced.ts', import.meta.url));

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Max rps: autocannon, 50 connections, as fast as the server answers. */
async function cannon(url: string, headers: Record<string, string>): Promise<Load> {
  const args = [AUTOCANNON, '-c', '50', '-d', String(SECONDS), '-j'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const { stdout } = await run(process.execPath, [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/** Latency at 1,000 rps offered, evenly paced over 50 connections (bench/paced.ts). */
async function paced(url: string, headers: Record<string, string>): Promise<Load> {
  const args = ['--import', 'tsx', PACED, url, '1000', String(SECONDS), '50', JSON.stringify(headers)];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout) as Load;
}

interface Measured {
  max: Load;
  at1000: Load;
}

/** Every target measured in ROUNDS interleaved rounds (max rps, then 1,000 rps offered); the median of each figure. */
async function measureInRounds(targets: { url: string; headers?: Record<string, string> }[]): Promise<Measured[]> {
  const runs: Measured[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, t] of targets.entries()) {
      const max = await cannon(t.url, t.headers ?? {});
      const at1000 = await paced(t.url, t.headers ?? {});
      runs[i]!.push({ max, at1000 });
    }
  }
  const median = (xs: number[]) => percentile(xs, 50);
  const pick = (ms: Measured[], key: 'max' | 'at1000'): Load => ({
    rps: median(ms.map((m) => m[key].rps)),
    p50: median(ms.map((m) => m[key].p50)),
    p99: median(ms.map((m) => m[key].p99)),
    errors: ms.reduce((n, m) => n + m[key].errors, 0),
  });
  return runs.map((ms) => ({ max: pick(ms, 'max'), at1000: pick(ms, 'at1000') }));
}

/** One minute per row for `minutes` minutes on each machine, keyed like metering (`meter:<machine>:<minute>`). */
async function meterHistory(db: Awaited<ReturnType<typeof buildApp>>['ctx']['db'], machineIds: string[], minutes: number) {
  for (const id of machineIds) {
    await db.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
      select gen_random_uuid(), l.machine_id, 'debit', -1, l.id, 'meter:' || l.machine_id || ':' || g, 'runtime'
      from ledger_entries l cross join generate_series(1::int, ${minutes}::int) g where l.machine_id = ${id}::uuid and l.kind = 'credit'`);
  }
}

/**
 * After a history written in one statement per machine: metering writes one debit per lot per minute, each in its
 * own transaction, so a lot's page is pruned as it goes (HOT updates, fillfactor 50) and autovacuum keeps up; a
 * thousand updates of one lot in ONE transaction leave dead row versions no minute-by-minute history has. Vacuum
 * brings the tables to the state real metering leaves them in, and refreshes the planner's statistics.
 */
async function settle(db: Awaited<ReturnType<typeof buildApp>>['ctx']['db']) {
  await db.execute(sql`vacuum analyze`);
}

async function bench(kind: string) {
  const { database, drop } = await freshDatabase();
  const clock = manualClock(new Date());
  const app = await buildApp({ config: testConfig({ LOG_LEVEL: 'silent' }), database, logger: false, clock });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const db = app.ctx.db;
  const expires = new Date(clock.now().getTime() + 30 * DAY);

  const single = async () => {
    const u = await seedUser(db);
    const id = (await db.execute(sql`insert into machines (id, owner_user_id, name, region, platform)
      values (gen_random_uuid(), ${u.uid}::uuid, 'UE-UK', 'UK', 'Unreal Engine') returning id`)).rows[0]!.id as string;
    await app.ctx.ledger.credit(db, { machineId: id, minutes: 150 * 60, expiresAt: expires, key: `bench:${id}` });
    return { u, id, token: await app.ctx.tokens.sign(u) };
  };
  const fresh = await single();
  const used = await single(); // (b): a user like (a), after 100 hours of metered minutes
  await meterHistory(db, [used.id], 100 * 60);
  const teacher = await seedUser(db, { instructor: true });
  const startAt = new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(db, { userId: teacher.uid, vms: 40, hours: 25, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await db.transaction((tx) => app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const courseMachines = (await db.execute(sql`select id from machines where course_id = ${courseId}::uuid order by seq`)).rows.map((r) => String(r.id));
  await meterHistory(db, courseMachines, 20 * 60);
  await settle(db);
  const teacherToken = await app.ctx.tokens.sign(teacher);

  // Baseline: a bare Fastify handler, ONE query on the same database (machines joined with a ledger sum).
  const bare = Fastify({ logger: false });
  bare.get('/bare', async () => {
    const res = await db.execute(sql`select m.id, m.name, m.observed, coalesce(sum(l.minutes), 0)::int as minutes
      from machines m left join ledger_entries l on l.machine_id = m.id where m.owner_user_id = ${fresh.u.uid}::uuid group by m.id`);
    return { rows: res.rows };
  });
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/bare`;

  const balance = `${base}/v1/user/wallet/balance`;
  const [baseline, a, b, c] = (await measureInRounds([
    { url: bareUrl },
    { url: balance, headers: { idtoken: fresh.token } },
    { url: balance, headers: { idtoken: used.token } },
    { url: balance, headers: { idtoken: teacherToken } },
  ])) as [Measured, Measured, Measured, Measured];

  // Metering tick, 40 online machines (each already 20 h into its hours): one pass after a minute has begun.
  const onlineSince = new Date(clock.now().getTime() - 30_000);
  await db.execute(sql`update machines set desired = 'running', observed = 'online', online_since = ${onlineSince.toISOString()}::timestamptz where course_id = ${courseId}::uuid`);
  const tickClock = manualClock(clock.now());
  const metering = createMetering({ db, ledger: app.ctx.ledger, clock: tickClock, log: console, stop: async () => {} });
  const ticks: number[] = [];
  for (let i = 0; i < 5; i++) {
    tickClock.set(new Date(onlineSince.getTime() + i * 60_000 + 1000));
    const t = performance.now();
    await metering.runOnce();
    ticks.push(performance.now() - t);
  }
  await db.execute(sql`update machines set desired = 'stopped', observed = 'offline', online_since = null where course_id = ${courseId}::uuid`);
  const n = Number((await db.execute(sql`select count(*) as n from ledger_entries`)).rows[0]!.n);

  await bare.close();
  await app.close();
  await drop();

  const line = (name: string, r: Measured, lat: Load) =>
    `${kind.padEnd(8)} ${name.padEnd(34)} ${r.max.rps.toFixed(0).padStart(6)} rps (${ratio(r.max.rps, baseline.max.rps)} of bare)` +
    `  @1000: p50 ${r.at1000.p50.toFixed(2)} ms (${ratio(r.at1000.p50, lat.p50)}), p99 ${r.at1000.p99.toFixed(2)} ms (${ratio(r.at1000.p99, lat.p99)} of (a))` +
    (r.max.errors + r.at1000.errors ? `  ERRORS ${r.max.errors + r.at1000.errors}` : '');
  console.log(line('bare Fastify, one query', baseline, a.at1000));
  console.log(line('(a) balance, fresh single user', a, a.at1000));
  console.log(line('(b) balance, after 100 h metered', b, a.at1000));
  console.log(line('(c) balance, instructor 40 × 20 h', c, a.at1000));
  console.log(`${kind.padEnd(8)} metering tick, 40 online machines: first ${fmtMs(ticks[0]!)}, then p50 ${fmtMs(percentile(ticks.slice(1), 50))} (${n} ledger rows)`);
}

runOnEachDatabase(bench);
