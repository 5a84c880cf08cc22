import { z } from 'zod';
import { ErrorBody } from './common';

/**
 * Connect (design §5). The ticket call answers TicketAnswer (contract/src/machines.ts), a 404 for anyone without
 * access, or a 409 with one of these codes when the machine cannot be reached right now.
 */
export const ConnectRefusalCode = z.enum(['machine-offline', 'machine-starting', 'hours-exhausted', 'seats-full']);
export type ConnectRefusalCode = z.infer<typeof ConnectRefusalCode>;

export const ConnectRefusal = ErrorBody.extend({
  code: ConnectRefusalCode,
  /** ISO time the current start began (machine-starting), for the 5-minute countdown. */
  processingSince: z.string().nullable(),
  /** Why the machine last stopped on its own (machine-offline, hours-exhausted), else null. */
  stopReason: z.string().nullable(),
});
export type ConnectRefusal = z.infer<typeof ConnectRefusal>;

/**
 * The gateway WebSocket carries the RFB stream in binary frames; small JSON text frames beside it carry status.
 * noVNC ignores text frames, so the two share one socket.
 */
export const GatewayServerMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), machineName: z.string(), idleStopMinutes: z.number() }),
  z.object({ type: z.literal('pong'), t: z.number() }),
  /** No input for a while: the machine stops at stopAt unless the user does something. */
  z.object({ type: z.literal('idle-warning'), stopAt: z.string() }),
  /** Sent right before the gateway closes the socket for good (no reconnect). */
  z.object({
    type: z.literal('stopped'),
    code: z.enum(['machine-stopped', 'hours-exhausted', 'access-lost', 'idle']),
    reason: z.string(),
  }),
]);
export type GatewayServerMessage = z.infer<typeof GatewayServerMessage>;

export const GatewayClientMessage = z.discriminatedUnion('type', [
  /** Round-trip probe; the gateway answers pong with the same t. */
  z.object({ type: z.literal('ping'), t: z.number() }),
  /** The 'I'm still here' answer to an idle warning; counts as input. */
  z.object({ type: z.literal('active') }),
]);
export type GatewayClientMessage = z.infer<typeof GatewayClientMessage>;

/**
 * WebSocket close codes the gateway uses (4000–4999 are the application's). The tab reconnects after any other
 * close (a network drop, a restart of the server or of the desktop's VNC server).
 */
export const GATEWAY_CLOSE = {
  ticketRefused: 4401,
  accessLost: 4403,
  machineStopped: 4409,
  tooManySessions: 4429,
  desktopUnreachable: 4502,
} as const;

/** Payload of the connect tab's URL fragment (spec §7): base64 of this JSON. */
export const ConnectPayload = z.object({
  url: z.string().max(2000),
  role: z.string().max(20),
  packId: z.string().max(100),
  machineName: z.string().max(200),
});
export type ConnectPayload = z.infer<typeof ConnectPayload>;
