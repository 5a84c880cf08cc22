/**
 * Operator console read path (issue 15.2): every console page's /v1/admin call against 10,000 users, 1,000 machines
 * (900 single, 10 courses × 10), 10,000 orders, 2,000 messages, 1,000 adjustments and 5,000 audit rows, on
 * PostgreSQL (DATABASE_URL: a fresh database) and on PGlite. The server runs as `npm start` runs it, in its own
 * process (bench/production-server.ts); the bench writes the rows before it starts. Each page: 20 warm-up calls, then
 * `n` sequential calls through real HTTP; p50/p99 per page, first pages, searches and deep pages (a keyset cursor in
 * the middle of the table). Goal: p99 < 100 ms on PostgreSQL. Figures only; nothing here is a test. Run as root
 * (the server is prepared as `npm start` prepares it).
 *
 *   npm run bench:admin [calls per page (default 200)]
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../server/src/db/client';
import { insertUser, toPrincipal } from '../server/src/modules/identity/users';
import { encodeCursor } from '../server/src/modules/admin/cursor';
import { fmtMs, percentile } from './stats';
import { runOnEachDatabase } from './each-database';
import { startSeededServer } from './production-server';

const CALLS = Number(process.argv[2] ?? 200);
const USERS = 10_000;
const GOAL_MS = 100;

async function seedRows(db: Database['db']) {
  const x = (q: ReturnType<typeof sql>) => db.execute(q);
  await x(sql`insert into users (id, email, display_name, password_hash, created_at)
    select gen_random_uuid(), 'user-' || lpad(g::text, 6, '0') || '@example.com', 'User ' || g, 'x', now() - make_interval(secs => g)
    from generate_series(1, ${USERS}::int) g`);
  await x(sql`insert into sessions (id, user_id, secret_hash, expires_at) select gen_random_uuid(), id, 'x', now() + interval '30 days' from users`);
  // 900 single machines, all stopped: the server runs its reconciler on the real engine, which would start every
  // machine the rows said was running (the Fleet page's online filter then reads an empty page).
  await x(sql`insert into machines (id, owner_user_id, name, region, platform, desired, observed, created_at)
    select gen_random_uuid(), u.id, 'UE-UK-' || substr(u.id::text, 1, 4), 'UK', 'Unreal Engine', 'stopped', 'offline',
      now() - make_interval(secs => u.n)
    from (select id, row_number() over (order by email) as n from users order by email limit 900) u`);
  // 10 courses of 10 machines, taught by the next 10 users, 20 students on each roster.
  const teachers = (await x(sql`select id from users order by email offset 900 limit 10`)).rows as { id: string }[];
  for (const [i, t] of teachers.entries()) {
    const courseId = randomUUID();
    await x(sql`insert into courses (id, owner_user_id, name, region, platform, vms, hours_per_machine, start_at, end_at)
      values (${courseId}, ${t.id}, ${`Course ${i + 1}`}, 'UK', 'Unreal Engine', 10, 20, now(), now() + interval '30 days')`);
    await x(sql`insert into machines (id, course_id, seq, name, region, platform)
      select gen_random_uuid(), ${courseId}::uuid, g, 'Seat ' || g, 'UK', 'Unreal Engine' from generate_series(1, 10) g`);
    await x(sql`insert into roster (course_id, email) select ${courseId}::uuid, 'student-' || g || '@example.com' from generate_series(1, 20) g`);
  }
  // Hours on every machine (the trigger opens each lot), then 1,000 adjustments on the first 500.
  await x(sql`insert into ledger_entries (id, machine_id, kind, minutes, expires_at, idempotency_key)
    select gen_random_uuid(), id, 'credit', 600, now() + interval '30 days', 'bench:' || id from machines`);
  await x(sql`insert into ledger_entries (id, machine_id, kind, minutes, lot_id, idempotency_key, note, created_at)
    select gen_random_uuid(), l.machine_id, 'adjustment', 5, l.id, 'bench-adj:' || l.id || ':' || g, 'bench goodwill', now() - make_interval(secs => g)
    from (select id, machine_id from ledger_lots order by id limit 500) l cross join generate_series(1, 2) g`);
  await x(sql`insert into orders (id, user_id, kind, region, platform, hours, amount_minor, currency, status, provider, provider_session_id,
      success_url, cancel_url, created_at, paid_at, fulfilled_at)
    select gen_random_uuid(), id, 'single', 'UK', 'Unreal Engine', 10, 1499, 'GBP', case when created_at < now() - interval '1 hour' then 'paid' else 'pending' end,
      'builtin', 'cs_bench_' || replace(id::text, '-', ''), 'http://x/s', 'http://x/f', created_at, created_at, created_at from users`);
  await x(sql`insert into contact_messages (id, name, email, query, source, recipient, created_at)
    select gen_random_uuid(), 'Visitor ' || g, 'visitor-' || g || '@example.com', 'Question number ' || g, case when g % 2 = 0 then 'support' else 'contact' end,
      'help@example.com', now() - make_interval(secs => g) from generate_series(1, 2000) g`);
  await x(sql`insert into mail_outbox (id, to_addr, subject, body_text, kind, sent_at)
    select id, recipient, 'Contact request', query, 'contact-' || source, now() from contact_messages`);
  await x(sql`insert into admin_audit (at, actor_id, actor_email, action, target_type, target_id, before, after)
    select now() - make_interval(secs => g), gen_random_uuid(), 'ops-' || (g % 5) || '@example.com', 'hours.adjust', 'machine', gen_random_uuid()::text,
      jsonb_build_object('minutesLeft', 600), jsonb_build_object('minutesLeft', 660) from generate_series(1, 5000) g`);
  await x(sql`analyze`);
}

/** The rows, an operator who signed in with a second factor (the console requires it), and the deep pages' cursors. */
async function seed(database: Database) {
  const db = database.db;
  const t0 = performance.now();
  await seedRows(db);
  const admin = (await insertUser(db, { email: 'ops@example.com', displayName: 'Ops', password: 'bench-123', admin: true, now: new Date() }))!;
  await db.execute(sql`insert into user_totp (user_id, secret_enc, confirmed_at) values (${admin.id}, 'unused', now())`);
  const seedMs = performance.now() - t0;
  // Deep-page cursors: a row in the middle of each table, as the browser would get after ~200 pages.
  const mid = async (q: ReturnType<typeof sql>) => (await db.execute(q)).rows[0] as { k: string; id: string };
  const c = (r: { k: string; id: string }) => encodeCursor([r.k, r.id]);
  return {
    operator: { ...toPrincipal(admin), amr: ['pwd', 'otp'], mfa: true },
    seedMs,
    userMid: c(await mid(sql`select email as k, id::text as id from users order by email offset 5000 limit 1`)),
    orderMid: c(await mid(sql`select created_at::text as k, id::text as id from orders order by created_at desc, id desc offset 5000 limit 1`)),
    machineMid: c(await mid(sql`select created_at::text as k, id::text as id from machines order by created_at desc, id desc offset 500 limit 1`)),
    auditMid: c(await mid(sql`select id::text as k, id::text as id from admin_audit order by id desc offset 2500 limit 1`)),
    ownerEmail: (await mid(sql`select u.email as k, u.id::text as id from users u join machines m on m.owner_user_id = u.id order by u.email offset 450 limit 1`)).k,
  };
}

async function bench(kind: string) {
  const server = await startSeededServer('admin', seed);
  try {
    await readPages(kind, server.base, await server.sign(server.seeded.operator), server.seeded);
  } finally {
    await server.close();
  }
}

async function readPages(kind: string, base: string, token: string, s: Awaited<ReturnType<typeof seed>>) {
  console.log(`${kind}: seeded in ${fmtMs(s.seedMs)}`);
  const pages: [string, string][] = [
    ['Users, first page', '/v1/admin/users'],
    ['Users, search by e-mail', '/v1/admin/users?q=user-004242'],
    ['Users, search by name (no match)', '/v1/admin/users?q=nobody-by-this-name'],
    ['Users, page 200 (cursor)', `/v1/admin/users?after=${s.userMid}`],
    ['Fleet, first page', '/v1/admin/fleet'],
    ['Fleet, online only', '/v1/admin/fleet?state=online'],
    ['Fleet, by owner e-mail', `/v1/admin/fleet?q=${encodeURIComponent(s.ownerEmail)}`],
    ['Fleet, page 20 (cursor)', `/v1/admin/fleet?after=${s.machineMid}`],
    ['Orders, first page', '/v1/admin/orders'],
    ['Orders, paid, page 200 (cursor)', `/v1/admin/orders?status=paid&after=${s.orderMid}`],
    ['Orders, by buyer e-mail', '/v1/admin/orders?q=user-004242'],
    ['Courses, first page', '/v1/admin/courses'],
    ['Messages, first page', '/v1/admin/messages'],
    ['Messages, Contact Support only', '/v1/admin/messages?source=support'],
    ['Hours, adjustments first page', '/v1/admin/adjustments'],
    ['Audit, first page', '/v1/admin/audit'],
    ['Audit, page 100 (cursor)', `/v1/admin/audit?after=${s.auditMid}`],
    ['Audit, search by operator', '/v1/admin/audit?q=ops-3@example.com'],
  ];

  const rows: string[] = [];
  let worst = 0;
  for (const [name, path] of pages) {
    const times: number[] = [];
    for (let i = 0; i < 20 + CALLS; i++) {
      const t = performance.now();
      const res = await fetch(base + path, { headers: { idtoken: token } });
      const body = (await res.json()) as { items?: unknown[] };
      if (res.status !== 200 || !Array.isArray(body.items)) throw new Error(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      if (i >= 20) times.push(performance.now() - t);
      if (i === 0 && path.includes('after=') && body.items.length === 0) throw new Error(`${path}: a deep page came back empty`);
    }
    const p50 = percentile(times, 50);
    const p99 = percentile(times, 99);
    worst = Math.max(worst, p99);
    rows.push(`${kind.padEnd(8)} ${name.padEnd(36)} p50 ${p50.toFixed(1).padStart(6)} ms   p99 ${p99.toFixed(1).padStart(6)} ms`);
  }
  console.log(rows.join('\n'));
  console.log(`${kind.padEnd(8)} worst p99 ${worst.toFixed(1)} ms: ${worst < GOAL_MS ? 'within' : 'OVER'} the ${GOAL_MS} ms goal (${CALLS} sequential calls per page)`);
}

runOnEachDatabase(bench);
