import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { fakeProvider } from './connect-fixtures';
import { startTestServer, type TestServer } from './harness';
import { machines, seats } from '../src/db/schema/index';
import { tcpEndpoint, type Endpoint } from '../src/modules/machines/providers/endpoint';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { MultipartReader, sanitizeJpeg } from '../src/modules/wall/jpeg';

/**
 * The instructor wall's API (issue 22.2): only the course's instructor reads the wall (others 404); a student on
 * the list raises and lowers a hand, the instructor sees and lowers it; take-over input reaches the desktop's VNC
 * server only while the instructor's take-over is on (409 before and after), and the student reads who controls
 * their desktop and when it ended. Pictures from a desktop are rebuilt from their image segments only.
 */

const DAY = 86_400_000;
const HERE = path.dirname(fileURLToPath(import.meta.url));
let s: TestServer;
const endpoints = new Map<string, Endpoint>();

/** A VNC server that completes the handshake (no password, 1920×1080) and records the client's messages. */
interface FakeVnc {
  endpoint: Endpoint;
  received: Buffer[];
  close(): Promise<void>;
}
async function fakeVnc(): Promise<FakeVnc> {
  const received: Buffer[] = [];
  const socks: net.Socket[] = [];
  const server = net.createServer((sock) => {
    socks.push(sock);
    sock.on('error', () => {});
    let step = 0;
    sock.on('data', (b) => {
      if (step === 0) {
        step = 1;
        sock.write(Buffer.from([1, 1])); // security types: None
      } else if (step === 1) {
        step = 2;
        sock.write(Buffer.alloc(4)); // security result: OK
      } else if (step === 2) {
        step = 3;
        const init = Buffer.alloc(24 + 4);
        init.writeUInt16BE(1920, 0);
        init.writeUInt16BE(1080, 2);
        init.writeUInt32BE(4, 20);
        init.write('desk', 24);
        sock.write(init);
      } else received.push(Buffer.from(b));
    });
    sock.write('RFB 003.008\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: tcpEndpoint('127.0.0.1', (server.address() as net.AddressInfo).port),
    received,
    close: () => new Promise((r) => (socks.forEach((x) => x.destroy()), server.close(() => r()))),
  };
}

let vnc: FakeVnc;
beforeAll(async () => {
  vnc = await fakeVnc();
  s = await startTestServer({ overrides: { machineProvider: fakeProvider(endpoints) } });
}, 180_000); // PGlite's first migrations on a host shared with other test runs
afterAll(async () => {
  await s.close();
  await vnc.close();
});

async function user(opts: { instructor?: boolean; email?: string; name?: string } = {}) {
  const p = await seedUser(s.app.ctx.db, opts);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}

/** A started course of `vms` machines, all online, with `students` on its list. */
async function runningCourse(vms: number, students: string[]) {
  const teacher = await user({ instructor: true, name: 'Tess Teacher' });
  const startAt = new Date(Date.now() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: teacher.p.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  const ids = (await s.app.ctx.db.select({ id: machines.id }).from(machines).where(eq(machines.courseId, courseId))).map((m) => m.id);
  for (const id of ids) endpoints.set(id, vnc.endpoint);
  if (students.length) {
    const fd = new FormData();
    fd.append('packId', courseId);
    fd.append('attachment', new Blob([students.join('\n')]), 'students.csv');
    expect((await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: teacher.token }, body: fd })).status).toBe(200);
  }
  expect((await s.call('POST', '/v1/pack/start', { token: teacher.token, body: { packId: courseId } })).status).toBe(200);
  for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
  return { teacher, courseId, ids };
}

/** KeyEvents (type 4) the fake VNC server received: [down, keysym]. */
const keyEvents = () => {
  const all = Buffer.concat(vnc.received);
  const out: [number, number][] = [];
  for (let i = 0; i + 8 <= all.length; ) {
    if (all[i] === 4) {
      out.push([all[i + 1]!, all.readUInt32BE(i + 4)]);
      i += 8;
    } else if (all[i] === 5) i += 6;
    else break;
  }
  return out;
};

describe('wall', () => {
  it('only the instructor of the course reads the wall; others get 404', async () => {
    const { courseId, ids, teacher } = await runningCourse(2, []);
    const other = await user({ instructor: true });
    const wall = await s.call('GET', `/v1/wall/course/${courseId}`, { token: teacher.token });
    expect(wall.status).toBe(200);
    expect(wall.body.seats.map((x: { machineId: string; online: boolean }) => [x.machineId, x.online]).sort()).toEqual(ids.map((id) => [id, true]).sort());
    for (const path of [`/v1/wall/course/${courseId}`, `/v1/wall/course/${courseId}/stream`, '/v1/wall/course/not-a-uuid']) {
      expect((await s.call('GET', path, { token: other.token })).status).toBe(404);
    }
    expect((await s.call('POST', '/v1/wall/takeover', { token: other.token, body: { machineId: ids[0], on: true } })).status).toBe(404);
    expect((await s.call('POST', '/v1/wall/input', { token: other.token, body: { machineId: ids[0], events: [{ t: 'k', down: true, keysym: 97 }] } })).status).toBe(404);
    expect((await s.call('GET', `/v1/wall/course/${courseId}`)).status).toBe(401);
  });

  it('a student raises a hand; the wall shows it at their seat; the instructor lowers it', async () => {
    const email = `hand-${Date.now()}@example.com`;
    const { courseId, ids, teacher } = await runningCourse(1, [email]);
    const student = await user({ email, name: 'Hana Hand' });
    const outsider = await user();
    expect((await s.call('POST', '/v1/wall/hand', { token: outsider.token, body: { packId: courseId, raised: true } })).status).toBe(404);
    expect((await s.call('GET', `/v1/wall/mine?packId=${courseId}`, { token: outsider.token })).status).toBe(404);
    const raised = await s.call('POST', '/v1/wall/hand', { token: student.token, body: { packId: courseId, raised: true } });
    expect(raised.body).toMatchObject({ hand: true, takeover: null });
    // Not seated yet: the hand is listed apart; seated: on the seat's tile.
    let wall = (await s.call('GET', `/v1/wall/course/${courseId}`, { token: teacher.token })).body;
    expect(wall.handsAway.map((h: { name: string }) => h.name)).toEqual(['Hana Hand']);
    await s.app.ctx.db.insert(seats).values({ machineId: ids[0]!, courseId, userId: student.p.uid });
    wall = (await s.call('GET', `/v1/wall/course/${courseId}`, { token: teacher.token })).body;
    expect(wall.handsAway).toEqual([]);
    expect(wall.seats[0].student.name).toBe('Hana Hand');
    expect(wall.seats[0].handRaisedAt).toBeTruthy();
    expect((await s.call('POST', `/v1/wall/course/${courseId}/lower-hand`, { token: teacher.token, body: { userId: student.p.uid } })).status).toBe(200);
    expect((await s.call('GET', `/v1/wall/mine?packId=${courseId}`, { token: student.token })).body.hand).toBe(false);
  });

  it('take-over input reaches the desktop only while the take-over is on; the student reads it and its end', async () => {
    const email = `taken-${Date.now()}@example.com`;
    const { courseId, ids, teacher } = await runningCourse(1, [email]);
    const student = await user({ email, name: 'Tom Taken' });
    await s.app.ctx.db.insert(seats).values({ machineId: ids[0]!, courseId, userId: student.p.uid });
    const input = (keysym: number) => s.call('POST', '/v1/wall/input', { token: teacher.token, body: { machineId: ids[0], events: [{ t: 'k', down: true, keysym }, { t: 'k', down: false, keysym }] } });

    const before = await input(0x62);
    expect(before.status).toBe(409);
    expect(before.body.code).toBe('not-taken-over');

    expect((await s.call('POST', '/v1/wall/takeover', { token: teacher.token, body: { machineId: ids[0], on: true } })).status).toBe(200);
    const mine = (await s.call('GET', `/v1/wall/mine?packId=${courseId}`, { token: student.token })).body;
    expect(mine.takeover.by).toBe('Tess Teacher');
    expect((await s.call('GET', `/v1/wall/course/${courseId}`, { token: teacher.token })).body.seats[0].takenOver).toBe(true);
    expect((await input(0x61)).status).toBe(200);
    await expect.poll(() => keyEvents()).toEqual([[1, 0x61], [0, 0x61]]);
    // A held key the browser repeats: X (no auto-repeat of its own) takes each repeat as a release and a press; a held
    // Shift's repeat is dropped.
    const X = 0x78, SHIFT = 0xffe1;
    const held = [[true, X], [true, X], [true, SHIFT], [true, SHIFT], [false, SHIFT], [false, X]] as const;
    const repeated = await s.call('POST', '/v1/wall/input', { token: teacher.token, body: { machineId: ids[0], events: held.map(([down, keysym]) => ({ t: 'k', down, keysym })) } });
    expect(repeated.status).toBe(200);
    await expect.poll(() => keyEvents().slice(2)).toEqual([[1, X], [0, X], [1, X], [1, SHIFT], [0, SHIFT], [0, X]]);

    expect((await s.call('POST', '/v1/wall/takeover', { token: teacher.token, body: { machineId: ids[0], on: false } })).status).toBe(200);
    expect((await input(0x63)).status).toBe(409);
    const after = (await s.call('GET', `/v1/wall/mine?packId=${courseId}`, { token: student.token })).body;
    expect(after.takeover).toBeNull();
    expect(after.lastEndedAt).toBeTruthy();
    expect(keyEvents().map(([, k]) => k)).not.toContain(0x62);
    expect(keyEvents().map(([, k]) => k)).not.toContain(0x63);
  });

  it('a desktop picture keeps only its image segments; anything else ends the capture', () => {
    const jpeg = readFileSync(path.join(HERE, 'fixtures', 'wall-thumb.jpg'));
    const comment = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x0a]), Buffer.from('secret!!')]);
    const tampered = Buffer.concat([jpeg.subarray(0, 2), comment, jpeg.subarray(2), Buffer.from('trailing data')]);
    const clean = sanitizeJpeg(tampered, 256, 512)!;
    expect(clean).not.toBeNull();
    expect(clean.includes(Buffer.from('secret'))).toBe(false);
    expect(clean.includes(Buffer.from('trailing'))).toBe(false);
    expect(clean.subarray(-2)).toEqual(Buffer.from([0xff, 0xd9]));
    expect(sanitizeJpeg(jpeg, 128, 512)).toBeNull(); // wider than the capture makes
    expect(sanitizeJpeg(Buffer.from('not a picture at all'), 256, 512)).toBeNull();
    const reader = new MultipartReader();
    const framed = Buffer.concat([Buffer.from(`--b\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\n\r\n`), jpeg, Buffer.from('\r\n')]);
    expect(reader.push(framed.subarray(0, 30)).length + reader.push(framed.subarray(30)).length).toBe(1);
    expect(() => new MultipartReader().push(Buffer.alloc(300, 0x41))).toThrow();
    expect(() => new MultipartReader().push(Buffer.from('--b\r\nContent-Length: 9999999\r\n\r\n'))).toThrow();
  });
});
