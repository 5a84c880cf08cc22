/**
 * The start of a class (issue 22, bench:classroom's second part): a course of 40 seats with 40 verified students on
 * its roster and one class in its timetable, set so that the timetable job starts the machines by itself (its warm
 * lead on the lxd provider); when the class begins, every student connects at once. Measured per student: Connect
 * (the ticket request, POST /v1/slot/connect/ticket) → the desktop's content (the panel and the xterm drawn) through
 * the gateway's WebSocket, and whether any ticket was refused or any seat restarted. Also: when the timetable started
 * the machines, and how long before the class all of them were online.
 * Before it, an earlier class (Start All, Stop All) makes the course's instances, as every class but a course's first
 * finds them (its time is printed: a new instance's first start remaps its files to the instance's own id range).
 * Baseline, same run: one student connecting alone to a seat that is already theirs, after the class rush (5 times).
 *
 * The server runs as `npm start` runs it (scripts/run-server.sh: compiled, logging on, the unprivileged user, on
 * PGlite or, with DATABASE_URL, a fresh database on that PostgreSQL), in its own process; the course, its instructor
 * and students are written into its database before it starts, as bench:api seeds its readers.
 * The students run in a process of their own (./students.ts), apart from this one and the server's: their client speaks
 * RFB through the gateway as the tab's VNC mode does (32-bit pixels, a compressed encoding: ZRLE), reading the tiles'
 * colours to tell a drawn desktop from an empty screen; the tab's WebRTC first frame is bench:stream's (one viewer at
 * a time: 40 video encoders do not fit 2 cores).
 *
 *   sudo [DATABASE_URL=postgres://…] npx tsx bench/classroom/class-start.ts [seats (default 40)]
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { Database } from '../../server/src/db/client';
import { createLedger } from '../../server/src/modules/ledger/service';
import { fulfilCourseOrder } from '../../server/src/modules/courses/fulfil';
import { seedCourseOrder, seedRoster, seedUser } from '../../server/src/modules/courses/fixtures/seed';
import { warmLeadMs } from '../../server/src/modules/timetable/job';
import { until as waitFor } from '../../server/test/machines-desktops';
import { courseStates, poster, startSeededServer } from '../production-server';
import { cpuSnapshot, cpuSplit } from '../cpu-split';
import { fmtMs, percentile, ratio } from '../stats';
import type { Connected, StudentsResult } from './students';

const DAY = 86_400_000;
const CLASS_MINUTES = 10;
const SOLO_RUNS = 5;
const FIRST_START_TIMEOUT_MS = 30 * 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const STUDENTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'students.ts');
const run = promisify(execFile);

/**
 * Students pressing Connect, in a process of their own (./students.ts): their RFB clients inflate and scan whole
 * frames, which must not take the server's event loop, as it runs in this process. `together`: all at once, else
 * one after another.
 */
async function students(base: string, tokens: string[], courseId: string, together: boolean): Promise<StudentsResult> {
  const args = ['--import', 'tsx', STUDENTS, JSON.stringify({ base, tokens, courseId, together })];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as StudentsResult;
}

/** The first whole minute (UTC) at least `leadMs` from now, as the timetable's date and times. */
function classSlot(leadMs: number) {
  const start = new Date(Math.ceil((Date.now() + leadMs) / 60_000) * 60_000);
  const end = new Date(start.getTime() + CLASS_MINUTES * 60_000);
  if (end.getUTCDate() !== start.getUTCDate()) throw new Error('the class would cross midnight (UTC): run it a few minutes later');
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  return { start, date: start.toISOString().slice(0, 10), from: hhmm(start), to: hhmm(end) };
}

type Call = (path: string, body: object) => Promise<unknown>;
type States = () => Promise<string[]>;

/** A course of `seats` machines with as many verified students on its roster, and its instructor. */
async function seedClass(database: Database, seats: number) {
  const db = database.db;
  const owner = await seedUser(db, { instructor: true, name: 'Bench Instructor' });
  const startAt = new Date(Date.now() - DAY);
  const orderId = await seedCourseOrder(db, { userId: owner.uid, vms: seats, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 7 * DAY) });
  const courseId = await db.transaction((tx) => fulfilCourseOrder(tx, createLedger(db), { id: orderId }));
  const students = await Promise.all(Array.from({ length: seats }, (_, i) => seedUser(db, { name: `Student ${i + 1}` })));
  await seedRoster(db, courseId, students.map((st) => st.email));
  return { owner, courseId, students };
}

/**
 * An earlier class (Start All, then Stop All): the course's instances exist, as for every class but the first (a new
 * instance's first start remaps its files to its own id range: minutes for 40 on 2 cores).
 */
async function earlierClass(call: Call, states: States, courseId: string, seats: number): Promise<void> {
  const until = (what: string, done: (s: string[]) => boolean) => waitFor(what, async () => done(await states()), FIRST_START_TIMEOUT_MS, 500);
  const first = performance.now();
  let startAlls = 0;
  const startAll = async () => {
    startAlls++;
    await call('/v1/pack/start', { packId: courseId });
  };
  await startAll();
  // A start that timed out on a busy host leaves its machine offline: Start All again, as an instructor would.
  await until('the first start', (s) => {
    if (s.some((x) => x === 'offline') && s.every((x) => x !== 'processing')) void startAll();
    return s.every((x) => x === 'online');
  });
  console.log(`an earlier class: the first start of the ${seats} new machines took ${fmtMs(performance.now() - first)} until all were online (Start All pressed ${startAlls}×)`);
  await call('/v1/pack/stop', { packId: courseId, terminate: true });
  await until('Stop All', (s) => s.every((x) => x === 'offline'));
}

/** Sets one class in the timetable and waits for its start, saying when the timetable had its machines online. */
async function untilClassBegins(call: Call, states: States, courseId: string, seats: number): Promise<void> {
  const lead = warmLeadMs('lxd');
  const slot = classSlot(lead + 20_000);
  await call('/v1/pack/timetable/add', { packId: courseId, kind: 'once', date: slot.date, start: slot.from, end: slot.to, timeZone: 'UTC' });
  console.log(`class ${slot.date} ${slot.from}–${slot.to} UTC; the timetable starts its machines ${fmtMs(lead)} ahead`);
  const t0 = performance.now();
  let firstAsked = 0;
  let online: number;
  for (;;) {
    const s = await states();
    online = s.filter((x) => x === 'online').length;
    if (!firstAsked && s.some((x) => x !== 'offline')) firstAsked = performance.now();
    if (online === seats || Date.now() >= slot.start.getTime()) break;
    await sleep(250);
  }
  const ahead = slot.start.getTime() - Date.now();
  if (online === seats) {
    console.log(`the timetable started the machines ${fmtMs(firstAsked - t0)} after the class was set; all ${seats} online ${fmtMs(performance.now() - firstAsked)} later, ${fmtMs(ahead)} before the class`);
  } else console.log(`the class began with ${online}/${seats} machines online (the others' students wait for them)`);
  await sleep(Math.max(0, ahead));
}

function report(seats: number, databaseKind: string, rush: Connected[], alone: Connected[]): void {
  const row = (label: string, xs: number[]) =>
    console.log(`${label.padEnd(58)} p50 ${fmtMs(percentile(xs, 50)).padStart(9)}   p95 ${fmtMs(percentile(xs, 95)).padStart(9)}   max ${fmtMs(Math.max(...xs)).padStart(9)}   n=${xs.length}`);
  const times = rush.map((r) => r.ms);
  const solo = alone.map((r) => r.ms);
  console.log(`\nStart of a class of ${seats} seats on the lxd provider (${databaseKind})\n`);
  row(`${seats} students at once: Connect → desktop content`, times);
  row('  of which the ticket', rush.map((r) => r.ticket));
  row('  then the gateway → the desktop greets (RFB version)', rush.map((r) => r.greeted));
  row('baseline, one student alone: Connect → desktop content', solo);
  row('  of which the ticket', alone.map((r) => r.ticket));
  row('  then the gateway → the desktop greets (RFB version)', alone.map((r) => r.greeted));
  console.log(`${'p95 at the class start / one student alone p50'.padEnd(58)} ${ratio(percentile(times, 95), percentile(solo, 50))}`);
  console.log(`${'tickets refused (409) before a seat was ready'.padEnd(58)} ${rush.reduce((n, r) => n + r.refused, 0)}`);
}

export async function classStart(seats: number): Promise<void> {
  const server = await startSeededServer('class', (database) => seedClass(database, seats));
  const { base, seeded, sign } = server;
  const { courseId, owner } = seeded;
  const instructor = server.tokenFor(owner);
  const call: Call = poster(base, instructor);
  const statesOf = courseStates(base, instructor);
  const states: States = () => statesOf(courseId);
  let cleaned: Promise<void> | null = null;
  /** Stops the course and removes everything the run made (also on Ctrl-C). */
  const cleanup = () =>
    (cleaned ??= (async () => {
      await call('/v1/pack/stop', { packId: courseId, terminate: true }).catch(() => undefined);
      for (let i = 0; i < 600 && !(await states().then((s) => s.every((x) => x === 'offline'), () => true)); i++) await sleep(100);
      await server.close();
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  try {
    await earlierClass(call, states, courseId, seats);
    await untilClassBegins(call, states, courseId, seats);
    console.log(`the class begins: ${seats} students press Connect`);
    const tokens = await Promise.all(seeded.students.map((st) => sign(st)));
    const before = cpuSnapshot({ 'the server (its own process)': server.pid });
    const { connected: rush, failed, cpuSeconds } = await students(base, tokens, courseId, true);
    const burst = [
      ...cpuSplit(before, cpuSnapshot({ 'the server (its own process)': server.pid })),
      `${'the students (their RFB clients)'.padEnd(34)} ${cpuSeconds.toFixed(1).padStart(7)} CPU-s`,
    ];
    if (failed.length) console.log(`${failed.length} of ${seats} students got no content:\n  ${[...new Set(failed)].join('\n  ')}`);
    const soloTokens = Array.from({ length: SOLO_RUNS }, (_, i) => tokens[i % seats]!);
    const { connected: alone, failed: soloFailed } = await students(base, soloTokens, courseId, false);
    for (const f of soloFailed) console.log(`a student alone got no content: ${f}`);
    report(seats, server.databaseKind, rush, alone);
    console.log(`\nwhere the CPU went while the ${seats} students connected:\n  ${burst.join('\n  ')}`);
    console.log(`the server's log: ${server.log.lines} lines, ${server.log.warnings} warnings or errors${server.log.warned.length ? `: ${server.log.warned.join(' | ')}` : ''}`);
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  classStart(Number(process.argv[2] ?? 40)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
