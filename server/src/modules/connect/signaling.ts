import type { FastifyBaseLogger } from 'fastify';
import { GatewayServerMessage, type GatewayClientMessage, type IceServer } from '@hyperdesk/contract';
import type { Endpoint } from '../machines/providers/types';

const MAX_LINE = 64 * 1024; // an SDP with every candidate fits in a few kB
const AGENT_CONNECT_TIMEOUT_MS = 10_000;

type Signal = Extract<GatewayClientMessage, { type: 'start' | 'answer' | 'ice' }>;

/**
 * The gateway's side of one WebRTC session: a connection to the machine's streaming agent (newline-delimited JSON
 * on its private socket). The agent gets the ICE servers first, then only the tab's start/answer/ice messages, each
 * re-validated; from the agent only offer/ice reach the tab. Closing it makes the agent tear its peer down. The agent
 * streams to one viewer: when another connection takes it, it says `replaced` first, and onClose hears so.
 */
export function openAgent(
  address: Endpoint,
  iceServers: IceServer[],
  log: FastifyBaseLogger,
  toClient: (msg: GatewayServerMessage) => void,
  onClose: (replaced: boolean) => void,
) {
  const sock = address.open();
  let buf = '';
  let closed = false;
  let replaced = false;
  const queued: string[] = [];
  let connected = false;
  sock.setEncoding('utf8');
  const timeout = setTimeout(() => sock.destroy(new Error('agent connect timeout')), AGENT_CONNECT_TIMEOUT_MS);
  sock.once('close', () => clearTimeout(timeout));
  const line = (msg: object) => `${JSON.stringify(msg)}\n`;
  sock.once('connect', () => {
    clearTimeout(timeout);
    connected = true;
    sock.write(line({ type: 'config', iceServers }));
    for (const q of queued) sock.write(q);
    queued.length = 0;
    toClient({ type: 'rtc-config', iceServers });
  });
  sock.on('data', (chunk: string) => {
    buf += chunk;
    if (buf.length > MAX_LINE && !buf.includes('\n')) return sock.destroy(new Error('agent line too long'));
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        continue;
      }
      if ((parsed as { type?: unknown } | null)?.type === 'replaced') replaced = true;
      const msg = GatewayServerMessage.safeParse(parsed);
      if (msg.success && (msg.data.type === 'offer' || msg.data.type === 'ice')) toClient(msg.data);
    }
  });
  sock.on('error', (err) => log.warn({ err: err.message }, 'streaming agent connection error'));
  sock.on('close', () => {
    if (closed) return;
    closed = true;
    onClose(replaced);
  });
  return {
    send(msg: Signal) {
      if (closed) return;
      const text = line(msg);
      if (connected) sock.write(text);
      else if (queued.length < 64) queued.push(text);
    },
    close() {
      closed = true;
      sock.destroy();
    },
  };
}
