import type { z } from 'zod';
import { GatewayServerMessage, TicketAnswer } from '@hyperdesk/contract';
import { request } from './http';

/**
 * Trades the balance entry's url (and the id token request() adds) for a single-use gateway ticket. Refusals come
 * back as ApiError: 404 (no access), 409 with code machine-offline / machine-starting / hours-exhausted.
 */
export function requestTicket(url: string): Promise<z.infer<typeof TicketAnswer>> {
  return request('POST', '/v1/slot/connect/ticket', { body: { url }, schema: TicketAnswer });
}

/** The gateway's WebSocket address on this origin (ws: or wss: like the page). */
export function gatewayUrl(wsPath: string): string {
  const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${window.location.host}${wsPath}`;
}

/** A status message of the gateway (JSON text frames beside the binary desktop stream), or null. */
export function parseGatewayMessage(text: string): GatewayServerMessage | null {
  try {
    const parsed = GatewayServerMessage.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export const pingMessage = (t: number) => JSON.stringify({ type: 'ping', t });
export const activeMessage = () => JSON.stringify({ type: 'active' });
