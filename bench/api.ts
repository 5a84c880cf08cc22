/**
 * API read path (issue 14): GET /v1/user/wallet/balance with autocannon (50 connections, in a child process so it
 * does not share the server's event loop), on PostgreSQL (DATABASE_URL: a fresh database) and on PGlite.
 * Baseline in the same run and on the same database: a bare Fastify handler making ONE comparable query (the
 * user's machines joined with a ledger sum). Measured for (a) a fresh single user, (b) the same user after
 * 100 hours of metered minutes (6,000 debit rows, written like metering writes them: one row per minute, the lot
 * remainder kept by the ledger's trigger), (c) an instructor with a 40-machine course after 20 hours per machine
 * (48,000 rows): max rps, p50/p99 at 1,000 rps offered, and ratios. Also the metering tick for 40 online machines.
 *
 *   npm run bench:api [seconds per run (default 8)]
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { sql } from 'drizzle-orm';
import { buildApp } from '../server/src/app';
import { freshDatabase, testConfig } from '../server/test/harness';
import { manualClock } from '../server/src/lib/clock';
import { createMetering } from '../server/src/modules/machines/metering';
import { seedCourseOrder, seedUser } from '../server/src/modules/courses/fixtures/seed';
import { fmtMs, percentile, ratio } from './stats';
import { runOnEachDatabase } from './each-database';

const SECONDS = Number(process.argv[2] ?? 8);
const DAY = 86_400_000;
const run = promisify(execFile);
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function cannon(url: string, headers: Record<string, string>, rate?: number): Promise<Load> {
  const args = [AUTOCANNON, '-c', '50', '-d', String(SECONDS), '-j'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  if (rate) args.push('-R', String(rate));
  const { stdout } = await run(process.execPath, [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number };
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function measure(url: string, headers: Record<string, string> = {}) {
  const max = await cannon(url, headers);
  const at1000 = await cannon(url, headers, 1000);
  return { max, at1000 };
}

/** One minute per row for `minutes` minutes on each machine, keyed like metering (`meter:<machine>:<minute>`). */
async function meterHistory(db: Awaited<ReturnType<typeof buildApp>>['ctx']['db'], machineIds: string[], minutes: number) {
  for (const id of machineIds) {
    await db.execute(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note)
      select gen_random_uuid(), l.machine_id, 'debit', -1, l.id, 'meter:' || l.machine_id || ':' || g, 'runtime'
      from ledger_entries l cross join generate_series(1::int, ${minutes}::int) g where l.machine_id = ${id}::uuid and l.kind = 'credit'`);
  }
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
  const teacher = await seedUser(db, { instructor: true });
  const startAt = new Date(clock.now().getTime() - DAY);
  const orderId = await seedCourseOrder(db, { userId: teacher.uid, vms: 40, hours: 25, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await db.transaction((tx) => app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const courseMachines = (await db.execute(sql`select id from machines where course_id = ${courseId}::uuid order by seq`)).rows.map((r) => String(r.id));
  await meterHistory(db, courseMachines, 20 * 60);
  await db.execute(sql`analyze`);
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
  const baseline = await measure(bareUrl);
  const a = await measure(balance, { idtoken: fresh.token });
  await meterHistory(db, [fresh.id], 100 * 60); // the same user, 100 hours later
  await db.execute(sql`analyze`);
  const b = await measure(balance, { idtoken: fresh.token });
  const c = await measure(balance, { idtoken: teacherToken });

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

  const line = (name: string, r: { max: Load; at1000: Load }, lat: number) =>
    `${kind.padEnd(8)} ${name.padEnd(34)} ${r.max.rps.toFixed(0).padStart(6)} rps (${ratio(r.max.rps, baseline.max.rps)} of bare)` +
    `  @1000: p50 ${r.at1000.p50.toFixed(1)} ms, p99 ${r.at1000.p99.toFixed(1)} ms (${ratio(r.at1000.p99, lat)} of (a))` +
    (r.max.errors + r.at1000.errors ? `  ERRORS ${r.max.errors + r.at1000.errors}` : '');
  console.log(line('bare Fastify, one query', baseline, a.at1000.p99));
  console.log(line('(a) balance, fresh single user', a, a.at1000.p99));
  console.log(line('(b) balance, after 100 h metered', b, a.at1000.p99));
  console.log(line('(c) balance, instructor 40 × 20 h', c, a.at1000.p99));
  console.log(`${kind.padEnd(8)} metering tick, 40 online machines: first ${fmtMs(ticks[0]!)}, then p50 ${fmtMs(percentile(ticks.slice(1), 50))} (${n} ledger rows)`);
}

runOnEachDatabase(bench);
