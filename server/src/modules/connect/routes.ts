import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import { z } from 'zod';
import { ConnectRefusal, TicketAnswer, TicketBody, type ConnectRefusalCode } from '@hyperdesk/contract';
import { principalOf } from '../../http/auth';
import type { Ctx } from '../../context';
import { BadRequest, HttpError, NotFound } from '../../errors';
import { canConnect } from './access';
import { runsWantedHome } from '../machines/reconciler-steps';
import { MAX_MESSAGE_BYTES, startInUrl } from './gateway';
import { ticketsIssued } from './metrics';
import { issueTicket } from './tickets';
import { SEATS_FULL_MESSAGE } from '../courses/seats';

export const CONNECT_PATH = '/v1/slot/connect';
const TICKET_RATE_LIMIT = { max: 60, timeWindow: 60_000 };

const refusalText: Record<ConnectRefusalCode, string> = {
  'machine-offline': 'Your machine is offline. Start it from your dashboard to connect.',
  'machine-starting': 'Your machine is starting. It will be ready within 5 minutes.',
  'hours-exhausted': 'You have no hours left on this machine. Top up to keep working.',
  'seats-full': SEATS_FULL_MESSAGE,
};

/** The machine id of a balance entry's url ('/v1/slot/connect?packId=…'); only its path and packId count. */
function packIdOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://connect.invalid');
  } catch {
    throw new BadRequest('Invalid url: not a connect link.', 'bad-url');
  }
  const packId = parsed.searchParams.get('packId');
  if (parsed.pathname !== CONNECT_PATH || !packId) throw new BadRequest('Invalid url: not a connect link.', 'bad-url');
  return packId;
}

/**
 * Connect (issue 5): the tab trades the entry's url and its id token for a short-lived single-use ticket, then opens
 * the gateway WebSocket with it (browsers cannot set headers on a WebSocket).
 */
export async function connectRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const { gateway } = ctx.connect;

  async function ticketFor(req: FastifyRequest, reply: FastifyReply, packId: string) {
    const principal = principalOf(req);
    // Classrooms: every machine of the student's course is taken (a refusal like the others, not a 404).
    const machine = await canConnect(ctx.db, principal, packId).catch((err) => {
      if (err instanceof HttpError && err.code === 'seats-full') return 'seats-full' as const;
      throw err;
    });
    if (machine === 'seats-full') {
      ticketsIssued.inc({ outcome: 'seats-full' });
      const body = { statusCode: 409, error: 'Conflict', message: SEATS_FULL_MESSAGE, code: machine, reqId: String(req.id) };
      return reply.status(409).send({ ...body, processingSince: null, stopReason: null });
    }
    if (!machine) {
      ticketsIssued.inc({ outcome: 'refused' });
      throw new NotFound();
    }
    const now = ctx.clock.now();
    let code: ConnectRefusalCode | null = null;
    if (machine.desired === 'running' && (machine.observed === 'processing' || !runsWantedHome(machine))) code = 'machine-starting';
    else if (machine.desired !== 'running' || machine.observed !== 'online') code = 'machine-offline';
    if (code !== 'machine-starting' && (await ctx.ledger.remainingMinutes(ctx.db, machine.id, now)) <= 0) code = 'hours-exhausted';
    if (code) {
      if (!runsWantedHome(machine)) ctx.events.signal('reconcile'); // the leader (any replica) switches the desktop to this student's home now
      ticketsIssued.inc({ outcome: code });
      return reply.status(409).send({
        statusCode: 409,
        error: 'Conflict',
        message: refusalText[code],
        code,
        reqId: String(req.id),
        processingSince: code === 'machine-starting' ? (machine.processingSince?.toISOString() ?? null) : null,
        stopReason: machine.stopReason,
      });
    }
    const { ticket, expiresIn } = await issueTicket(ctx.db, { userId: principal.uid, machineId: machine.id, now });
    ticketsIssued.inc({ outcome: 'issued' });
    req.log.info({ userId: principal.uid, machineId: machine.id }, 'connect ticket issued');
    return { ticket, wsPath: `${CONNECT_PATH}/ws?ticket=${ticket}`, expiresIn };
  }

  const response = { 200: TicketAnswer, 409: ConnectRefusal };

  // The WebSocket plugin lives in this scope only, with the gateway's message size limit.
  await v1.register(async (scope) => {
    await scope.register(websocket, { options: { maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false } });

    scope.post('/slot/connect/ticket', {
      preHandler: scope.authenticate,
      config: { rateLimit: TICKET_RATE_LIMIT },
      schema: { tags: ['connect'], summary: 'Trade a balance entry url for a single-use gateway ticket', body: TicketBody, response },
    }, async (req, reply) => ticketFor(req, reply, packIdOf((req.body as z.infer<typeof TicketBody>).url)));

    // The balance entry's url itself answers the same ticket JSON.
    scope.get('/slot/connect', {
      preHandler: scope.authenticate,
      config: { rateLimit: TICKET_RATE_LIMIT },
      schema: { tags: ['connect'], summary: 'Ticket for the machine named by packId', querystring: z.object({ packId: z.string().max(100) }), response },
    }, async (req, reply) => ticketFor(req, reply, (req.query as { packId: string }).packId));

    // A browser always names the page's origin on a WebSocket upgrade; another site's page must not reach the
    // gateway with a ticket it got hold of. Clients without Origin (not browsers) still need a valid ticket.
    const allowed = allowedOrigin(ctx.config);
    scope.get('/slot/connect/ws', {
      websocket: true,
      preValidation: async (req, reply) => {
        const origin = req.headers.origin;
        if (origin !== undefined && !allowed(origin)) {
          req.log.warn({ origin }, 'gateway upgrade from a foreign origin refused');
          return reply.status(403).send({ statusCode: 403, error: 'Forbidden', message: 'This page may not open desktop sessions.', code: 'bad-origin' });
        }
      },
    }, (socket, req) => {
      const q = req.query as Record<string, unknown>;
      gateway.accept(socket, q.ticket, req.log, q.mode === 'webrtc' ? 'webrtc' : 'vnc', startInUrl(q));
    });

    scope.addHook('onClose', async () => gateway.closeAll());
  });
}

/**
 * PUBLIC_URL's origin; without PUBLIC_URL (local development, benches) any http loopback origin, since the Vite dev
 * server and test browsers use their own port.
 */
export function allowedOrigin(config: Ctx['config']): (origin: string) => boolean {
  const own = new URL(config.publicUrl).origin;
  return (origin) => {
    if (origin === own) return true;
    if (config.PUBLIC_URL) return false;
    return /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(origin);
  };
}
