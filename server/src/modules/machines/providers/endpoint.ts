import net from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Where the gateway reaches a desktop's service (its VNC server or its streaming agent): `ref` says where (kept in
 * the machine row, for operators), `open()` opens a byte stream there. The stream emits 'connect' once it is
 * usable, like a net.Socket; a provider opens it through whatever channel it trusts (the engine's authenticated API),
 * so callers never touch a path a tenant can write.
 */
export interface Endpoint {
  ref: Record<string, string | number>;
  open(): Duplex;
}

export function tcpEndpoint(host: string, port: number): Endpoint {
  return { ref: { host, port }, open: () => net.connect({ host, port }) };
}
