import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { and, eq, or } from 'drizzle-orm';
import { MachineResetAnswer, MachineResetBody, SlotAnswer, SlotBody, type SlotStatus } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { accountActive } from '../identity/users';
import { Conflict, NotFound, TooMany } from '../../errors';
import { transaction } from '../../db/after-commit';
import { courses, machines } from '../../db/schema/index';
import { UUID } from './service';
import { throttle } from '../../lib/throttle';

export const NO_HOURS_MESSAGE = 'This machine has no runtime hours left. Buy more hours to start it.';
export const UNAVAILABLE_MESSAGE = 'Machines cannot be started right now. Please try again later or contact support.';
export const connectUrl = (machineId: string) => `/v1/slot/connect?packId=${encodeURIComponent(machineId)}`;
const HEARTBEAT_MS = 25_000;
/** A stream's `balance` pushes come at most this often (the dashboard re-fetches on each). */
const PUSH_GAP_MS = 250;
const STREAMS_PER_USER = 10;

/**
 * POST /v1/user/slot (spec §7): a single user's Start Machine and Stop. The answer comes at once; the reconciler
 * does the work and GET /v1/user/events tells the dashboard when the state changed.
 */
export async function machinesRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { db, clock } = ctx;

  r.post(
    '/user/slot',
    { preHandler: app.authenticate, schema: { tags: ['machines'], summary: 'Start or stop a machine', body: SlotBody, response: { 200: SlotAnswer } } },
    async (req) => {
      const uid = principalOf(req).uid;
      const { packId, terminate } = req.body;
      const url = connectUrl(packId);
      const own = and(eq(machines.id, packId), eq(machines.ownerUserId, uid));
      if (!UUID.test(packId)) throw new NotFound('Machine not found.');

      if (terminate) {
        const [row] = await db.select({ id: machines.id }).from(machines).where(own);
        if (!row) throw new NotFound('Machine not found.');
        await ctx.machines.requestStop(db, [packId], undefined, 'user');
        return { status: 'STOPPED' as const, url };
      }

      const unavailable = (await ctx.machines.provider.preflight?.()) ?? null;
      if (unavailable) req.log.error({ reason: unavailable }, 'machine provider cannot start machines');
      // The row lock serializes concurrent starts: double clicks and parallel requests ask for one start.
      const status = await transaction(db, async (tx): Promise<SlotStatus> => {
        const [row] = await tx.select().from(machines).where(own).for('update');
        if (!row || !(await accountActive(tx, uid))) throw new NotFound('Machine not found.');
        if (row.desired === 'running') return row.observed === 'online' ? 'RUNNING' : 'WAIT';
        if (unavailable) return 'FAILED';
        if ((await ctx.ledger.remainingMinutes(tx, packId, clock.now())) <= 0) throw new Conflict(NO_HOURS_MESSAGE, 'machine/no-hours');
        await ctx.machines.requestStart(tx, [packId]);
        return 'WAIT';
      });
      return status === 'FAILED' ? { status, url, reason: UNAVAILABLE_MESSAGE } : { status, url };
    },
  );

  r.post(
    '/user/slot/reset',
    { preHandler: app.authenticate, schema: { tags: ['machines'], summary: 'Reset a machine to a fresh desktop', body: MachineResetBody, response: { 200: MachineResetAnswer } } },
    async (req) => {
      const uid = principalOf(req).uid;
      const { packId, eraseHome } = req.body;
      if (!UUID.test(packId)) throw new NotFound('Machine not found.');
      await transaction(db, async (tx) => {
        // The machine's owner, or the instructor of the course it belongs to.
        const [row] = await tx
          .select({ id: machines.id })
          .from(machines)
          .leftJoin(courses, eq(courses.id, machines.courseId))
          .where(and(eq(machines.id, packId), or(eq(machines.ownerUserId, uid), eq(courses.ownerUserId, uid))))
          .for('update', { of: machines });
        if (!row || !(await accountActive(tx, uid))) throw new NotFound('Machine not found.');
        await ctx.machines.requestReset(tx, packId, eraseHome ? 'home' : 'desktop');
      });
      return { status: 'RESETTING' as const };
    },
  );

  const open = new Map<string, number>();
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end();
  });
  app.addHook('onClose', async () => ctx.machines.close());

  /** Server-sent events for the signed-in user: `event: balance` whenever one of their machines changes state. */
  r.get(
    '/user/events',
    { preHandler: app.authenticate, schema: { tags: ['machines'], summary: 'Push stream (text/event-stream) of balance changes' } },
    async (req, reply) => {
      const uid = principalOf(req).uid;
      if ((open.get(uid) ?? 0) >= STREAMS_PER_USER) throw new TooMany('Too many open event streams. Close a tab and try again.');
      open.set(uid, (open.get(uid) ?? 0) + 1);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 5000\n: connected\n\n');
      // A burst (a class's 40 machines coming online, each announced to every student) is one or two re-fetches.
      const push = throttle(() => res.write('event: balance\ndata: {}\n\n'), PUSH_GAP_MS);
      const unsubscribe = ctx.events.subscribe(uid, push);
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        push.cancel();
        unsubscribe();
        streams.delete(end);
        const left = (open.get(uid) ?? 1) - 1;
        if (left > 0) open.set(uid, left);
        else open.delete(uid);
        if (!res.writableEnded) res.end();
      };
      streams.add(end);
      req.raw.on('close', end);
      res.on('close', end);
      res.on('error', end);
    },
  );
}
