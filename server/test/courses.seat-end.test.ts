import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { GATEWAY_CLOSE } from '@hyperdesk/contract';
import { courseTicket } from './course-tickets';
import { fakeDesktop, fakeProvider, openGateway, until, type FakeDesktop } from './connect-fixtures';
import { startTestServer, type TestServer } from './harness';
import { machines, seatEndings, seats } from '../src/db/schema/index';
import type { Endpoint } from '../src/modules/machines/providers/types';
import { seedCourseOrder, seedUser } from '../src/modules/courses/fixtures/seed';
import { NOBODY_SEATED, SESSION_ENDED_BY_INSTRUCTOR } from '../src/modules/courses/seat-sessions';

/**
 * An instructor ends one student's session (issue 22.3): POST /v1/pack/seat/end frees the seat of one of the course's
 * machines, the student's open desktop session closes with the instructor's reason, and the seat list shows it free.
 * Anyone but the course's instructor gets 404; a seat nobody holds gets 409.
 */

const DAY = 86_400_000;
let s: TestServer;
let desk: FakeDesktop;
const endpoints = new Map<string, Endpoint>();

beforeAll(async () => {
  desk = await fakeDesktop('seat');
  s = await startTestServer({ overrides: { machineProvider: fakeProvider(endpoints) } });
});
afterAll(async () => {
  await s.close();
  await desk.close();
});

async function user(opts: { instructor?: boolean; email?: string } = {}) {
  const p = await seedUser(s.app.ctx.db, opts);
  return { p, token: await s.app.ctx.tokens.sign(p) };
}

/** A running course of `vms` machines with `students` on its list, all machines online. */
async function runningCourse(vms: number, students: string[]) {
  const teacher = await user({ instructor: true });
  const startAt = new Date(Date.now() - DAY);
  const orderId = await seedCourseOrder(s.app.ctx.db, { userId: teacher.p.uid, vms, hours: 10, startAt, expiresAt: new Date(startAt.getTime() + 30 * DAY) });
  const courseId = await s.app.ctx.db.transaction((tx) => s.app.ctx.courses.fulfilCourseOrder(tx, { id: orderId }));
  for (const m of await s.app.ctx.db.select({ id: machines.id }).from(machines).where(eq(machines.courseId, courseId))) endpoints.set(m.id, desk.endpoint);
  if (students.length) {
    const fd = new FormData();
    fd.append('packId', courseId);
    fd.append('attachment', new Blob([students.join('\n')]), 'students.csv');
    expect((await fetch(`${s.base}/v1/pack/emails`, { method: 'POST', headers: { idtoken: teacher.token }, body: fd })).status).toBe(200);
  }
  expect((await s.call('POST', '/v1/pack/start', { token: teacher.token, body: { packId: courseId } })).status).toBe(200);
  for (let i = 0; i < 3; i++) await s.app.ctx.machines.reconciler.runOnce();
  return { teacher, courseId };
}

const seatsOf = async (token: string, courseId: string) => {
  const res = await s.call('GET', '/v1/user/wallet/balance', { token });
  return res.body.balance.find((e: { packId: string }) => e.packId === courseId).seats as { machineId: string; machineName: string; student: string | null }[];
};
const endSeat = (token: string, packId: string, machineId: string) => s.call('POST', '/v1/pack/seat/end', { token, body: { packId, machineId } });

describe('POST /v1/pack/seat/end', () => {
  it("frees the student's seat, closes their session with the instructor's reason, and shows the seat free", async () => {
    const student = await user({ email: `seat-end-${Date.now()}@example.com` });
    const { teacher, courseId } = await runningCourse(2, [student.p.email]);
    const ticket = await courseTicket(s, student.token, courseId);
    expect(ticket.status).toBe(200);
    const session = await openGateway(s, ticket.body.wsPath);
    await session.text('hello');
    const seat = (await seatsOf(teacher.token, courseId)).find((x) => x.student === student.p.email);
    expect(seat).toBeDefined();

    const res = await endSeat(teacher.token, courseId, seat!.machineId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ended: true });

    expect((await session.closed).code).toBe(GATEWAY_CLOSE.accessLost);
    expect(session.texts.find((t) => t.type === 'stopped')).toEqual({ type: 'stopped', code: 'session-ended', reason: SESSION_ENDED_BY_INSTRUCTOR });
    expect((await seatsOf(teacher.token, courseId)).find((x) => x.machineId === seat!.machineId)?.student).toBeNull();
    expect(await s.app.ctx.db.select().from(seats).where(eq(seats.courseId, courseId))).toHaveLength(0);
    const endings = await s.app.ctx.db.select().from(seatEndings).where(and(eq(seatEndings.courseId, courseId), eq(seatEndings.userId, student.p.uid)));
    expect(endings).toHaveLength(1);

    // The seat is empty now: ending it again is a clear 409, and the student may connect again.
    const again = await endSeat(teacher.token, courseId, seat!.machineId);
    expect(again.status).toBe(409);
    expect(again.body.message).toBe(NOBODY_SEATED);
    expect((await courseTicket(s, student.token, courseId)).status).toBe(200);
  });

  it('answers 404 to anyone but the course instructor, and for a machine of another course', async () => {
    const student = await user({ email: `seat-end-b-${Date.now()}@example.com` });
    const { teacher, courseId } = await runningCourse(1, [student.p.email]);
    expect((await courseTicket(s, student.token, courseId)).status).toBe(200);
    const seat = (await seatsOf(teacher.token, courseId))[0]!;
    const other = await runningCourse(1, []);
    const stranger = await user({ instructor: true });

    expect((await endSeat(stranger.token, courseId, seat.machineId)).status).toBe(404);
    expect((await endSeat(student.token, courseId, seat.machineId)).status).toBeGreaterThanOrEqual(403);
    expect((await endSeat(other.teacher.token, courseId, seat.machineId)).status).toBe(404);
    const otherSeat = (await seatsOf(other.teacher.token, other.courseId))[0]!;
    expect((await endSeat(teacher.token, courseId, otherSeat.machineId)).status).toBe(404);
    expect((await endSeat(teacher.token, courseId, 'not-a-uuid')).status).toBe(404);
    // Nothing was ended by the refused calls.
    expect((await seatsOf(teacher.token, courseId))[0]?.student).toBe(student.p.email);
  });

  it('a student who sits down is announced to the instructor only (each classmate\'s session would re-check on it)', async () => {
    const [a, b] = [await user({ email: `seat-a-${Date.now()}@example.com` }), await user({ email: `seat-b-${Date.now()}@example.com` })];
    const { teacher, courseId } = await runningCourse(2, [a.p.email, b.p.email]);
    const sessionA = await openGateway(s, (await courseTicket(s, a.token, courseId)).body.wsPath);
    await sessionA.text('hello');
    // The Start's own announcement to the whole roster goes out a moment after the request: let it land first.
    await s.app.ctx.machines.announced();
    const heard = { teacher: 0, a: 0 };
    const offs = [s.app.ctx.events.subscribe(teacher.p.uid, () => heard.teacher++), s.app.ctx.events.subscribe(a.p.uid, () => heard.a++)];
    const sessionB = await openGateway(s, (await courseTicket(s, b.token, courseId)).body.wsPath);
    await sessionB.text('hello');
    await until(() => heard.teacher > 0 || undefined, 'the instructor to hear of the seat');
    for (const off of offs) off();
    expect(heard.teacher).toBeGreaterThan(0);
    expect(heard.a).toBe(0);
    sessionA.ws.close();
    sessionB.ws.close();
  });

  it('refuses malformed bodies with 400', async () => {
    const { teacher, courseId } = await runningCourse(1, []);
    for (const body of [{ packId: courseId }, { packId: courseId, machineId: 5 }, { packId: courseId, machineId: 'x', extra: true }]) {
      expect((await s.call('POST', '/v1/pack/seat/end', { token: teacher.token, body })).status).toBe(400);
    }
  });
});
