import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Endpoint } from '../machines/providers/types';

const HIGH_WATER = 1024 * 1024; // desktop → browser bytes queued in the socket before the desktop is paused
const LOW_WATER = 256 * 1024;
const MAX_EARLY_BYTES = 64 * 1024; // browser bytes held while the desktop connection opens
const DESKTOP_CONNECT_TIMEOUT_MS = 10_000;

export interface RelayEvents {
  /** Bytes the desktop sent, on their way to the tab. */
  toClient(bytes: number): void;
  /** The tab sent more than MAX_EARLY_BYTES before the desktop's connection opened. */
  overflow(): void;
  /** The desktop's connection closed (not by `destroy`). */
  closed(): void;
  warn(obj: object, msg: string): void;
}

/**
 * VNC mode's bytes between the tab's WebSocket and the desktop's socket, with backpressure both ways: a slow tab
 * pauses the desktop's socket, a slow desktop pauses the WebSocket. What the tab sends before the desktop's socket
 * opens is held (up to MAX_EARLY_BYTES) and written first.
 */
export function createDesktopRelay(ws: WebSocket, on: RelayEvents) {
  let tcp: Duplex | null = null;
  let connected = false;
  let destroyed = false;
  let early: Buffer[] = [];
  let earlyBytes = 0;
  let inFlight = 0;
  let tcpPaused = false;
  let wsPaused = false;

  /** A frame from the tab to the desktop. */
  function write(frame: Buffer): void {
    if (!connected || !tcp) {
      early.push(frame);
      earlyBytes += frame.length;
      if (earlyBytes > MAX_EARLY_BYTES) on.overflow();
      return;
    }
    if (!tcp.write(frame) && !wsPaused) {
      wsPaused = true;
      ws.pause();
      tcp.once('drain', () => {
        wsPaused = false;
        ws.resume();
      });
    }
  }

  /** Bytes from the desktop to the tab; the desktop waits while the tab's socket holds more than HIGH_WATER. */
  function forward(sock: Duplex, chunk: Buffer): void {
    on.toClient(chunk.length);
    inFlight += chunk.length;
    ws.send(chunk, { binary: true }, () => {
      inFlight -= chunk.length;
      if (tcpPaused && inFlight <= LOW_WATER) {
        tcpPaused = false;
        sock.resume();
      }
    });
    if (inFlight > HIGH_WATER && !tcpPaused) {
      tcpPaused = true;
      sock.pause();
    }
  }

  function open(endpoint: Endpoint): void {
    const sock = endpoint.open();
    tcp = sock;
    if (sock instanceof net.Socket) sock.setNoDelay(true);
    const timeout = setTimeout(() => sock.destroy(new Error('desktop connect timeout')), DESKTOP_CONNECT_TIMEOUT_MS);
    sock.once('close', () => clearTimeout(timeout));
    sock.once('connect', () => {
      clearTimeout(timeout);
      connected = true;
      for (const f of early) sock.write(f);
      early = [];
      earlyBytes = 0;
    });
    sock.on('data', (chunk: Buffer) => forward(sock, chunk));
    sock.on('error', (err) => on.warn({ err: err.message }, 'desktop connection error'));
    sock.on('close', () => {
      if (!destroyed) on.closed();
    });
  }

  function destroy(): void {
    destroyed = true;
    tcp?.destroy();
  }

  return { write, open, destroy };
}
