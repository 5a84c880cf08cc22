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
 * The student's client speaks RFB through the gateway as the tab's VNC mode does (32-bit pixels, a compressed
 * encoding: ZRLE), reading the tiles' colours to tell a drawn desktop from an empty screen; the tab's WebRTC first
 * frame is bench:stream's (one viewer at a time: 40 video encoders do not fit 2 cores).
 *
 *   sudo npx tsx bench/classroom/class-start.ts [seats (default 40)]
 */
import { eq } from 'drizzle-orm';
import { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { machines } from '../../server/src/db/schema/index';
import { seedCourseOrder, seedRoster, seedUser } from '../../server/src/modules/courses/fixtures/seed';
import { warmLeadMs } from '../../server/src/modules/timetable/job';
import { until as waitFor } from '../../server/test/machines-desktops';
import { startBenchServer } from '../server';
import { fmtMs, percentile, ratio } from '../stats';
import { ZrleStream } from './zrle';

const DAY = 86_400_000;
const CLASS_MINUTES = 10;
const SOLO_RUNS = 5;
/** A student who has no content by then is counted as failed, with where their connection stood. */
const CONTENT_TIMEOUT_MS = 2 * 60_000;
const FIRST_START_TIMEOUT_MS = 30 * 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Server = Awaited<ReturnType<typeof startBenchServer>>;

/** The gateway's binary frames as a byte stream (its text frames, hello and notices, are not the desktop's). */
function gatewayStream(url: string): Duplex {
  const ws = new WebSocket(url);
  const pending: Buffer[] = [];
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      if (ws.readyState === WebSocket.OPEN) return ws.send(chunk, { binary: true }, done);
      pending.push(chunk);
      done();
    },
    destroy(err, done) {
      ws.terminate();
      done(err);
    },
  });
  ws.on('open', () => {
    for (const p of pending.splice(0)) ws.send(p, { binary: true });
  });
  ws.on('message', (data, isBinary) => {
    if (isBinary) stream.push(data as Buffer);
  });
  ws.on('close', (code, reason) => stream.destroy(new Error(`gateway closed ${code} ${reason.toString()}`)));
  ws.on('error', (err) => stream.destroy(err));
  return stream;
}

/**
 * RFB over the stream until a full frame shows the desktop's content: handshake, 32-bit true colour, ZRLE (raw
 * allowed), full update requests until the frame has at least `minColours` colours (an empty screen has one).
 */
function untilContent(stream: Duplex, minColours = 8): Promise<{ greeted: number }> {
  const t0 = performance.now();
  let greeted = 0;
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let step: 'version' | 'security' | 'result' | 'init' | 'update' | 'rects' = 'version';
    let w = 0;
    let h = 0;
    let rects = 0;
    const colours = new Set<number>();
    const zrle = new ZrleStream();
    let received = 0;
    const timer = setTimeout(
      () => finish(new Error(`no content after ${CONTENT_TIMEOUT_MS / 1000} s (RFB step ${step}, ${received} bytes received, ${colours.size} colours)`)),
      CONTENT_TIMEOUT_MS,
    );
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      zrle.close();
      stream.destroy();
      if (err) reject(err);
      else resolve({ greeted });
    };
    const request = () => {
      const req = Buffer.alloc(10);
      req.writeUInt8(3, 0);
      req.writeUInt16BE(w, 6);
      req.writeUInt16BE(h, 8);
      stream.write(req);
    };
    stream.on('error', (err) => finish(err));
    // The messages in order, one at a time (a ZRLE rectangle is inflated asynchronously): more data while one is being
    // read is read after it.
    let reading = false;
    let more = false;
    const read = async () => {
      if (reading) return void (more = true);
      reading = true;
      try {
        do {
          more = false;
          await readMessages();
        } while (more && !done);
      } catch (err) {
        finish(err as Error);
      } finally {
        reading = false;
      }
    };
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      buf = Buffer.concat([buf, chunk]);
      void read();
    });
    const readMessages = async () => {
      while (!done) {
        if (step === 'version' && buf.length >= 12) {
          greeted = performance.now() - t0;
          buf = buf.subarray(12);
          stream.write('RFB 003.008\n');
          step = 'security';
        } else if (step === 'security' && buf.length >= 1 && buf.length >= 1 + buf[0]!) {
          if (!buf.subarray(1, 1 + buf[0]!).includes(1)) return finish(new Error('no "None" security type'));
          buf = buf.subarray(1 + buf[0]!);
          stream.write(Buffer.from([1]));
          step = 'result';
        } else if (step === 'result' && buf.length >= 4) {
          if (buf.readUInt32BE(0) !== 0) return finish(new Error('security handshake failed'));
          buf = buf.subarray(4);
          stream.write(Buffer.from([1])); // ClientInit: shared
          step = 'init';
        } else if (step === 'init' && buf.length >= 24 && buf.length >= 24 + buf.readUInt32BE(20)) {
          w = buf.readUInt16BE(0);
          h = buf.readUInt16BE(2);
          buf = buf.subarray(24 + buf.readUInt32BE(20));
          const pf = Buffer.alloc(20); // SetPixelFormat: 32 bpp little-endian true colour, depth 24
          Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0]).copy(pf, 4);
          stream.write(pf);
          stream.write(Buffer.from([2, 0, 0, 2, 0, 0, 0, 16, 0, 0, 0, 0])); // SetEncodings: ZRLE, raw
          request();
          step = 'update';
        } else if (step === 'update' && buf.length >= 4) {
          if (buf[0] !== 0) {
            // Another server message (bell, colour map, cut text): only cut text carries a length.
            if (buf[0] === 3 && buf.length >= 8 && buf.length >= 8 + buf.readUInt32BE(4)) buf = buf.subarray(8 + buf.readUInt32BE(4));
            else if (buf[0] === 2) buf = buf.subarray(1);
            else return;
            continue;
          }
          rects = buf.readUInt16BE(2);
          buf = buf.subarray(4);
          colours.clear();
          step = 'rects';
        } else if (step === 'rects' && buf.length >= 12) {
          const [rw, rh, enc] = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readInt32BE(8)];
          // ZRLE: a length, then zlib data; raw: 4 bytes a pixel; anything else (a size change) carries no pixels here.
          if (enc === 16 && buf.length < 16) return;
          const size = enc === 16 ? 4 + buf.readUInt32BE(12) : enc === 0 ? rw * rh * 4 : 0;
          if (buf.length < 12 + size) return;
          if (enc === 16) for (const c of await zrle.rect(buf.subarray(16, 12 + size), rw, rh)) colours.add(c);
          else for (let i = 12; i < 12 + size; i += 28) colours.add(buf.readUInt32LE(i) & 0xffffff);
          buf = buf.subarray(12 + size);
          if (enc === -223) [w, h] = [rw, rh]; // DesktopSize
          if (--rects > 0) continue;
          if (colours.size >= minColours) return finish();
          step = 'update';
          setTimeout(request, 100);
        } else return;
      }
    };
  });
}

interface Connected {
  /** Connect → content. */
  ms: number;
  /** The ticket's answer; the desktop's greeting (RFB version) after the WebSocket was asked for. */
  ticket: number;
  greeted: number;
  refused: number;
}

/** One student: ticket → gateway → content; answers the times and whether the ticket was refused first. */
async function connectStudent(s: Server, token: string, courseId: string): Promise<Connected> {
  const t0 = performance.now();
  let refused = 0;
  for (;;) {
    const res = await fetch(`${s.base}/v1/slot/connect/ticket`, {
      method: 'POST',
      headers: { idtoken: token, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `/v1/slot/connect?packId=${courseId}` }),
    });
    const body = (await res.json()) as { wsPath?: string; code?: string; message?: string };
    if (res.status === 200 && body.wsPath) {
      const ticket = performance.now() - t0;
      const { greeted } = await untilContent(gatewayStream(s.base.replace(/^http/, 'ws') + body.wsPath));
      return { ms: performance.now() - t0, ticket, greeted, refused };
    }
    if (res.status !== 409 || performance.now() - t0 > CONTENT_TIMEOUT_MS) throw new Error(`ticket: ${res.status} ${body.code} ${body.message}`);
    refused++;
    await sleep(250);
  }
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

/** A course of `seats` machines with as many verified students on its roster; their id tokens. */
async function seedClass(server: Server, ownerId: string, seats: number) {
  const { app, db } = server;
  const startAt = new Date(Date.now() - DAY);
  const orderId = await seedCourseOrder(db, { userId: ownerId, vms: seats, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 7 * DAY) });
  const courseId = await db.transaction((tx) => app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const students = await Promise.all(Array.from({ length: seats }, (_, i) => seedUser(db, { name: `Student ${i + 1}` })));
  await seedRoster(db, courseId, students.map((st) => st.email));
  return { courseId, tokens: await Promise.all(students.map((st) => app.ctx.tokens.sign(st))) };
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
  const server = await startBenchServer('class');
  const { app, base, db } = server;
  const owner = await seedUser(db, { instructor: true, name: 'Bench Instructor' });
  const ownerToken = await app.ctx.tokens.sign(owner);
  const call: Call = async (path, body) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { idtoken: ownerToken, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  let courseId = '';
  let cleaned: Promise<void> | null = null;
  /** Stops the course and removes everything the run made (also on Ctrl-C). */
  const cleanup = () =>
    (cleaned ??= (async () => {
      if (courseId) await call('/v1/pack/stop', { packId: courseId, terminate: true }).catch(() => undefined);
      const running = async () => (await app.ctx.machines.provider.list()).length > 0;
      for (let i = 0; i < 600 && (await running().catch(() => false)); i++) await sleep(100);
      await server.close();
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  try {
    const seeded = await seedClass(server, owner.uid, seats);
    courseId = seeded.courseId;
    const states: States = async () => (await db.select({ observed: machines.observed }).from(machines).where(eq(machines.courseId, courseId))).map((r) => r.observed);
    await earlierClass(call, states, courseId, seats);
    await untilClassBegins(call, states, courseId, seats);
    console.log(`the class begins: ${seats} students press Connect`);
    const settled = await Promise.allSettled(seeded.tokens.map((token) => connectStudent(server, token, courseId)));
    const rush = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = settled.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
    if (failed.length) console.log(`${failed.length} of ${seats} students got no content:\n  ${[...new Set(failed)].join('\n  ')}`);
    const alone: Connected[] = [];
    for (let i = 0; i < SOLO_RUNS; i++) {
      try {
        alone.push(await connectStudent(server, seeded.tokens[i % seats]!, courseId));
      } catch (err) {
        console.log(`a student alone got no content: ${(err as Error).message}`);
      }
    }
    report(seats, server.databaseKind, rush, alone);
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
