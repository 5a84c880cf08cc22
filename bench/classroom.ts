/**
 * Classroom Start All / Stop All on the lxd machine provider (issue 7): a course of 40 machines is started with one
 * POST /v1/pack/start; measured are the time until the call is acknowledged and until every machine is online
 * (p50 and max over the runs), the memory of the running desktops, and Stop All until every desktop is gone.
 * Baseline, measured in the same run (before each classroom run): Start All of a 1-machine course on the same server;
 * the classroom's all-online and acknowledgement p50s are printed as multiples of it (the scaling factor).
 * The server runs as `npm start` runs it, in its own process (bench/production-server.ts; the reconciler starts the
 * desktops), on PGlite, or PostgreSQL with DATABASE_URL; the courses are written into its database before it starts.
 * Then the start of a class on the timetable (bench/classroom/class-start.ts): the same
 * number of seats warm-started by the timetable and every student connecting when the class begins.
 *
 *   npx tsx bench/classroom.ts [runs (default 3)] [machines (default 40)]
 */
import type { Database } from '../server/src/db/client';
import { createLedger } from '../server/src/modules/ledger/service';
import { fulfilCourseOrder } from '../server/src/modules/courses/fulfil';
import { seedCourseOrder, seedUser } from '../server/src/modules/courses/fixtures/seed';
import { courseStates, poster, startSeededServer } from './production-server';
import { desktopMemory, instanceProcesses, printDesktopMemory } from './memory';
import { fmtMs, percentile, ratio } from './stats';
import { classStart } from './classroom/class-start';
import { describeHost } from './host';

const RUNS = Number(process.argv[2] ?? 3);
const VMS = Number(process.argv[3] ?? 40);
const RUN_TIMEOUT_MS = 15 * 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The instructor and two courses: the classroom's `VMS` machines and the 1-machine baseline. */
async function seedCourses(database: Database) {
  const db = database.db;
  const owner = await seedUser(db, { instructor: true, name: 'Bench Instructor' });
  const startAt = new Date(Date.now() - 60_000);
  const course = async (vms: number) => {
    const orderId = await seedCourseOrder(db, { userId: owner.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 7 * 86_400_000) });
    return db.transaction((tx) => fulfilCourseOrder(tx, createLedger(db), { id: orderId }));
  };
  return { owner, courseId: await course(VMS), baselineId: await course(1) };
}

async function main() {
  console.log(describeHost());
  const server = await startSeededServer('classroom', seedCourses);
  const { base, project } = server;
  const { owner, courseId, baselineId } = server.seeded;
  const running = () => instanceProcesses(project).length > 0;
  const token = server.tokenFor(owner);
  const post = poster(base, token);
  const pack = async (what: 'start' | 'stop', packId = courseId) =>
    (await post<{ status?: string }>(`/v1/pack/${what}`, what === 'stop' ? { packId, terminate: true } : { packId })).status;
  const statesOf = courseStates(base, token);
  const states = (id = courseId) => statesOf(id);

  /** Start All of a course until every machine is online, then Stop All until every desktop is gone. */
  async function startStop(id: string, vms: number, measureMemory: boolean) {
    const t0 = performance.now();
    const status = await pack('start', id);
    const ack = performance.now() - t0;
    if (status !== 'WAIT') throw new Error(`Start All answered ${status}`);
    let first = 0;
    for (;;) {
      const s = await states(id);
      const online = s.filter((x) => x === 'online').length;
      if (online > 0 && !first) first = performance.now() - t0;
      if (online === vms) break;
      if (s.every((x) => x === 'offline')) throw new Error('every machine went offline (start failed)');
      if (performance.now() - t0 > RUN_TIMEOUT_MS) throw new Error(`only ${online}/${vms} online after ${fmtMs(RUN_TIMEOUT_MS)}`);
      await sleep(100); // each look is a balance read on the server, as a dashboard's
    }
    const all = performance.now() - t0;
    let memory: ReturnType<typeof desktopMemory> | null = null;
    if (measureMemory) {
      await sleep(3000); // let the desktops settle before measuring memory
      memory = desktopMemory(project);
    }
    const t1 = performance.now();
    await pack('stop', id);
    while (running() || (await states(id)).some((x) => x !== 'offline')) {
      if (performance.now() - t1 > RUN_TIMEOUT_MS) throw new Error('desktops still running after Stop All');
      await sleep(50);
    }
    return { ack, first, all, stop: performance.now() - t1, memory };
  }

  const acks: number[] = [];
  const firstOnline: number[] = [];
  const allOnline: number[] = [];
  const stops: number[] = [];
  const baseAcks: number[] = [];
  const baseOnline: number[] = [];
  let memory: ReturnType<typeof desktopMemory> | null = null;
  try {
    for (let run = 1; run <= RUNS; run++) {
      const b = await startStop(baselineId, 1, false);
      baseAcks.push(b.ack);
      baseOnline.push(b.all);
      const r = await startStop(courseId, VMS, true);
      acks.push(r.ack);
      firstOnline.push(r.first);
      allOnline.push(r.all);
      stops.push(r.stop);
      if (r.memory && (!memory || r.memory.rss > memory.rss)) memory = r.memory;
      console.log(
        `run ${run}: baseline 1 machine: ack ${fmtMs(b.ack)}, online ${fmtMs(b.all)}; ` +
          `${VMS} machines: ack ${fmtMs(r.ack)}, all ${VMS} online ${fmtMs(r.all)}, all gone ${fmtMs(r.stop)}`,
      );
    }
  } finally {
    await pack('stop').catch(() => undefined);
    await pack('stop', baselineId).catch(() => undefined);
    for (let i = 0; i < 600 && running(); i++) await sleep(100);
    await server.close();
  }

  const row = (label: string, xs: number[]) =>
    console.log(`${label.padEnd(48)} p50 ${fmtMs(percentile(xs, 50)).padStart(9)}   max ${fmtMs(Math.max(...xs)).padStart(9)}   n=${xs.length}`);
  console.log(`\nClassroom of ${VMS} machines on the lxd provider (${server.databaseKind}), ${RUNS} runs\n`);
  row('POST /v1/pack/start → acknowledged', acks);
  row('POST /v1/pack/start → first machine online', firstOnline);
  row(`POST /v1/pack/start → all ${VMS} machines online`, allOnline);
  row('POST /v1/pack/stop → every desktop gone, offline', stops);
  row('baseline 1-machine course: start → acknowledged', baseAcks);
  row('baseline 1-machine course: start → online', baseOnline);
  console.log(`\nScaling against the 1-machine Start All (measured in this run):`);
  console.log(`${`all ${VMS} online p50 / 1 machine online p50`.padEnd(48)} ${ratio(percentile(allOnline, 50), percentile(baseOnline, 50))}`);
  console.log(`${`ack with ${VMS} machines p50 / ack with 1 machine p50`.padEnd(48)} ${ratio(percentile(acks, 50), percentile(baseAcks, 50))}`);
  if (memory) printDesktopMemory(memory);
  console.log('');
  await classStart(VMS);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
