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

/** One ICE server as RTCPeerConnection takes it (TURN ones carry time-limited credentials). */
export const IceServer = z.object({
  urls: z.array(z.string().max(500)).max(8),
  username: z.string().max(200).optional(),
  credential: z.string().max(200).optional(),
});
export type IceServer = z.infer<typeof IceServer>;

/** WebRTC signaling relayed between the tab and the machine's streaming agent (mode=webrtc sockets only). */
const Sdp = z.string().max(32_000);
const IceCandidate = z.object({ type: z.literal('ice'), candidate: z.string().max(1000), sdpMLineIndex: z.number().int().min(0).max(16) });

/** The gateway socket's modes, chosen by the tab in the URL (`&mode=webrtc`); VNC when absent. */
export const GatewayMode = z.enum(['vnc', 'webrtc']);
export type GatewayMode = z.infer<typeof GatewayMode>;

/**
 * The gateway WebSocket carries the RFB stream in binary frames; small JSON text frames beside it carry status.
 * noVNC ignores text frames, so the two share one socket. In webrtc mode there are no binary frames: the text
 * frames also carry the signaling (rtc-config, offer, ice) and the media flows peer to peer.
 */
export const GatewayServerMessage = z.discriminatedUnion('type', [
  /** webrtc mode: the ICE servers to use (sent once, before the agent's offer). */
  z.object({ type: z.literal('rtc-config'), iceServers: z.array(IceServer).max(4) }),
  z.object({ type: z.literal('offer'), sdp: Sdp }),
  IceCandidate,
  z.object({ type: z.literal('hello'), machineName: z.string(), idleStopMinutes: z.number() }),
  z.object({ type: z.literal('pong'), t: z.number() }),
  /**
   * The machine stops at stopAt: for lack of input unless the user does something (reason idle, the default), or
   * because the course's class ends then (reason class-end: nothing the student does keeps it running).
   */
  z.object({ type: z.literal('idle-warning'), stopAt: z.string(), reason: z.enum(['idle', 'class-end']).optional(), timeZone: z.string().optional() }),
  /** Sent right before the gateway closes the socket for good (no reconnect). */
  z.object({
    type: z.literal('stopped'),
    code: z.enum(['machine-stopped', 'hours-exhausted', 'access-lost', 'idle', 'session-ended']),
    reason: z.string(),
  }),
]);
export type GatewayServerMessage = z.infer<typeof GatewayServerMessage>;

export const GatewayClientMessage = z.discriminatedUnion('type', [
  /** Round-trip probe; the gateway answers pong with the same t. */
  z.object({ type: z.literal('ping'), t: z.number() }),
  /** The 'I'm still here' answer to an idle warning; counts as input. */
  z.object({ type: z.literal('active') }),
  /** webrtc mode: input went over the data channel (throttled by the tab); counts as input for idle stop. */
  z.object({ type: z.literal('activity') }),
  /**
   * webrtc mode: begin streaming, with the video codecs this browser decodes, best first. The tab puts the same in
   * the socket's URL instead (`&codecs=h264,vp8&quality=auto`, startInUrl): the stream then starts as soon as the
   * session opens, without waiting for the page to send anything.
   */
  z.object({ type: z.literal('start'), codecs: z.array(z.enum(['h264', 'vp8'])).min(1).max(2), quality: z.enum(['auto', 'low', 'medium', 'high']).optional() }),
  z.object({ type: z.literal('answer'), sdp: Sdp }),
  IceCandidate,
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
  /** The desktop streams to one tab at a time: another tab (or window, or computer) of the same desktop took it. */
  openedElsewhere: 4410,
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
