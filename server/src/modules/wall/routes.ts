import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HandBody, LowerHandBody, MyWallAnswer, TakeoverBody, WallAnswer, WallInputBody } from '@hyperdesk/contract';
import { principalOf } from '../../http/auth';
import type { Ctx } from '../../context';
import { Conflict, NotFound } from '../../errors';
import { onRoster } from '../courses/seats';
import { lxdExec } from './capture';
import { createCaptureHub } from './hub';
import { createInputs } from './input';
import { endTakeover, handRaised, handsAway, liveTakeover, ownCourse, ownMachine, setHand, startTakeover, takeoverOfStudent, wallSeats } from './repo';
import { openWallStream } from './stream';

const CourseParams = z.object({ courseId: z.string().max(100) });
const StreamQuery = z.object({ watch: z.string().uuid().optional() });
const MineQuery = z.object({ packId: z.string().max(100) });
const Ok = z.object({ ok: z.literal(true) });
/** Take-over input comes in small batches, about 20 a second while the instructor moves the mouse. */
const INPUT_LIMIT = { rateLimit: { max: 3000, timeWindow: 60_000 } };
const HAND_LIMIT = { rateLimit: { max: 60, timeWindow: 60_000 } };

/**
 * The instructor wall (issue 22.2): the course's instructor (others 404) sees every running seat and raised hands,
 * watches one desktop, and takes it over; a student raises and lowers their hand and reads whether their desktop
 * is being controlled.
 */
export async function wallRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const hub = createCaptureHub(lxdExec(ctx.config, ctx.machines.provider.kind), ctx.log);
  const inputs = createInputs((id) => ctx.machines.endpointOf(id), ctx.log);
  v1.addHook('onClose', async () => {
    hub.closeAll();
    inputs.closeAll();
  });
  const auth = { preHandler: v1.authenticate };
  const tags = ['wall'];

  async function courseOf(req: FastifyRequest) {
    const { courseId } = req.params as z.infer<typeof CourseParams>;
    const course = await ownCourse(ctx.db, principalOf(req).uid, courseId);
    if (!course) throw new NotFound();
    return course;
  }

  /** The student's course: a verified address on the roster of a course that has not ended (else 404). */
  async function studentCourse(req: FastifyRequest, courseId: string): Promise<string> {
    const p = principalOf(req);
    if (!p.emailVerified || !/^[0-9a-f-]{36}$/i.test(courseId) || !(await onRoster(ctx.db, courseId, p.email, ctx.clock.now()))) throw new NotFound();
    return courseId;
  }

  v1.get('/wall/course/:courseId', {
    ...auth,
    schema: { tags, summary: "The course's machines with who sits there, raised hands and take-overs", params: CourseParams, response: { 200: WallAnswer } },
  }, async (req) => {
    const course = await courseOf(req);
    const seats = await wallSeats(ctx.db, course.id, ctx.clock.now());
    const seated = new Set(seats.flatMap((s) => (s.student ? [s.student.userId] : [])));
    return { courseId: course.id, courseName: course.name, seats, handsAway: await handsAway(ctx.db, course.id, seated) };
  });

  v1.get('/wall/course/:courseId/stream', {
    ...auth,
    schema: { tags, summary: 'Thumbnails of the running seats (or the watched desktop) as a binary frame stream', params: CourseParams, querystring: StreamQuery },
  }, async (req, reply) => {
    const course = await courseOf(req);
    const { watch } = req.query as z.infer<typeof StreamQuery>;
    if (watch && (await ownMachine(ctx.db, principalOf(req).uid, watch))?.courseId !== course.id) throw new NotFound();
    if (!hub.available()) throw new Conflict('Live pictures of desktops need the lxd machine provider.', 'wall-unavailable');
    const out = openWallStream({ db: ctx.db, clock: ctx.clock, hub, log: req.log }, { courseId: course.id, userId: principalOf(req).uid, watch: watch ?? null });
    reply.raw.on('close', () => {
      out.destroy();
      // The watch ended (its take-over with it): keys and buttons still down are released.
      if (watch) void inputs.release(watch);
    });
    return reply.header('content-type', 'application/octet-stream').header('cache-control', 'no-store').header('x-accel-buffering', 'no').send(out);
  });

  v1.post('/wall/course/:courseId/lower-hand', {
    ...auth,
    config: HAND_LIMIT,
    schema: { tags, summary: "Lower a student's raised hand", params: CourseParams, body: LowerHandBody, response: { 200: Ok } },
  }, async (req) => {
    const course = await courseOf(req);
    await setHand(ctx.db, course.id, (req.body as z.infer<typeof LowerHandBody>).userId, false, ctx.clock.now());
    return { ok: true as const };
  });

  v1.post('/wall/takeover', {
    ...auth,
    config: HAND_LIMIT,
    schema: { tags, summary: "Take over a student's desktop (keyboard and mouse) or give it back", body: TakeoverBody, response: { 200: Ok } },
  }, async (req) => {
    const { machineId, on } = req.body as z.infer<typeof TakeoverBody>;
    const uid = principalOf(req).uid;
    const machine = await ownMachine(ctx.db, uid, machineId);
    if (!machine) throw new NotFound();
    const now = ctx.clock.now();
    if (!on) {
      await endTakeover(ctx.db, machineId, uid, now);
      await inputs.release(machineId);
      return { ok: true as const };
    }
    if (machine.desired !== 'running' || machine.observed !== 'online') throw new Conflict('This machine is not running.', 'machine-offline');
    const seat = (await wallSeats(ctx.db, machine.courseId, now)).find((s) => s.machineId === machineId);
    await startTakeover(ctx.db, { machineId, courseId: machine.courseId, instructorId: uid, studentId: seat?.student?.userId ?? null, at: now });
    return { ok: true as const };
  });

  v1.post('/wall/input', {
    ...auth,
    config: INPUT_LIMIT,
    schema: { tags, summary: 'Keyboard and mouse input of a take-over (refused unless the take-over is on)', body: WallInputBody, response: { 200: Ok } },
  }, async (req) => {
    const { machineId, events } = req.body as z.infer<typeof WallInputBody>;
    const uid = principalOf(req).uid;
    if (!(await ownMachine(ctx.db, uid, machineId))) throw new NotFound();
    const t = await liveTakeover(ctx.db, machineId, ctx.clock.now());
    if (!t || t.instructorId !== uid) throw new Conflict('Take over the desktop first.', 'not-taken-over');
    if (!(await inputs.send(machineId, events))) throw new Conflict('This desktop cannot be reached right now.', 'machine-offline');
    return { ok: true as const };
  });

  v1.post('/wall/hand', {
    ...auth,
    config: HAND_LIMIT,
    schema: { tags, summary: 'Raise or lower your hand in a course', body: HandBody, response: { 200: MyWallAnswer } },
  }, async (req) => {
    const { packId, raised } = req.body as z.infer<typeof HandBody>;
    const courseId = await studentCourse(req, packId);
    const uid = principalOf(req).uid;
    await setHand(ctx.db, courseId, uid, raised, ctx.clock.now());
    return { hand: raised, ...(await takeoverOfStudent(ctx.db, courseId, uid, ctx.clock.now())) };
  });

  v1.get('/wall/mine', {
    ...auth,
    schema: { tags, summary: 'Your hand in a course, and whether your instructor controls your desktop', querystring: MineQuery, response: { 200: MyWallAnswer } },
  }, async (req) => {
    const courseId = await studentCourse(req, (req.query as z.infer<typeof MineQuery>).packId);
    const uid = principalOf(req).uid;
    return { hand: await handRaised(ctx.db, courseId, uid), ...(await takeoverOfStudent(ctx.db, courseId, uid, ctx.clock.now())) };
  });
}
