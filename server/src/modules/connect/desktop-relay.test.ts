import net from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { tcpEndpoint } from '../machines/providers/endpoint';
import { createDesktopRelay, type RelayEvents } from './desktop-relay';

/** A desktop on loopback that keeps what it receives; `hold` leaves its socket unread (a desktop that does not keep up). */
async function desktop(opts: { hold?: boolean } = {}) {
  const got: Buffer[] = [];
  const socks: net.Socket[] = [];
  const server = net.createServer((sock) => {
    socks.push(sock);
    if (opts.hold) sock.pause();
    sock.on('data', (d: Buffer) => got.push(d));
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const plain = tcpEndpoint('127.0.0.1', port);
  /** The relay's ends of the connections, in order. */
  const opened: Duplex[] = [];
  return {
    endpoint: { ...plain, open: () => opened[opened.push(plain.open()) - 1]! },
    opened,
    received: () => Buffer.concat(got),
    socks,
    close: () =>
      new Promise<void>((r) => {
        socks.forEach((sock) => sock.destroy());
        server.close(() => r());
      }),
  };
}

/** The tab's WebSocket as the relay uses it: what it sends, and whether it is paused. */
function tab() {
  const sent: Buffer[] = [];
  const ws = {
    paused: false,
    send: (chunk: Buffer, _o: unknown, cb: () => void) => {
      sent.push(chunk);
      setImmediate(cb);
    },
    pause() {
      ws.paused = true;
    },
    resume() {
      ws.paused = false;
    },
  };
  return { ws, sent, socket: ws as unknown as WebSocket };
}

function events() {
  const seen = { toClient: 0, overflow: 0, closed: 0 };
  const on: RelayEvents = {
    toClient: (n) => void (seen.toClient += n),
    overflow: () => void seen.overflow++,
    closed: () => void seen.closed++,
    warn: () => undefined,
  };
  return { seen, on };
}

const until = async (ok: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A relay from a new tab to a new desktop (not opened yet), both closed after the test. */
async function relayed(opts: { hold?: boolean } = {}) {
  const d = await desktop(opts);
  cleanup.push(d.close);
  const t = tab();
  const { seen, on } = events();
  const relay = createDesktopRelay(t.socket, on);
  cleanup.push(relay.destroy);
  return { d, t, seen, on, relay };
}

describe('the desktop relay', () => {
  it('holds what the tab sends before the desktop answers and writes it first, in order', async () => {
    const { d, seen, relay } = await relayed();
    relay.write(Buffer.from('one '));
    relay.write(Buffer.from('two '));
    relay.open(d.endpoint);
    relay.write(Buffer.from('three'));
    await until(() => d.received().length === 13, 'all bytes at the desktop');
    expect(d.received().toString()).toBe('one two three');
    expect(seen.overflow).toBe(0);
  });

  it('says so when the tab sends more than 64 KiB before the desktop answers', async () => {
    const t = tab();
    const { seen, on } = events();
    const relay = createDesktopRelay(t.socket, on);
    relay.write(Buffer.alloc(60 * 1024));
    expect(seen.overflow).toBe(0);
    relay.write(Buffer.alloc(8 * 1024));
    expect(seen.overflow).toBe(1);
  });

  it('forwards the desktop to the tab and counts the bytes', async () => {
    const { d, t, seen, relay } = await relayed();
    relay.open(d.endpoint);
    await until(() => d.socks.length === 1, 'the connection');
    d.socks[0]!.write('RFB 003.008\n');
    await until(() => seen.toClient === 12, 'the greeting at the tab');
    expect(Buffer.concat(t.sent).toString()).toBe('RFB 003.008\n');
  });

  it('pauses the tab while the desktop does not keep up, and resumes it after', async () => {
    const { d, t, relay } = await relayed({ hold: true });
    relay.open(d.endpoint);
    await until(() => d.socks.length === 1, 'the connection');
    const chunk = Buffer.alloc(256 * 1024, 1);
    for (let i = 0; i < 64 && !t.ws.paused; i++) relay.write(chunk);
    expect(t.ws.paused).toBe(true);
    d.socks[0]!.resume();
    await until(() => !t.ws.paused, 'the tab resumed');
  });

  it('tells a close by the desktop, not one of its own', async () => {
    const d = await desktop();
    cleanup.push(d.close);
    const t = tab();
    const a = events();
    const relay = createDesktopRelay(t.socket, a.on);
    cleanup.push(relay.destroy);
    relay.open(d.endpoint);
    await until(() => d.socks.length === 1, 'the connection');
    d.socks[0]!.destroy();
    await until(() => a.seen.closed === 1, 'the close');

    const b = events();
    const own = createDesktopRelay(t.socket, b.on);
    own.open(d.endpoint);
    await until(() => d.socks.length === 2, 'the second connection');
    const gone = new Promise((r) => d.opened[1]!.once('close', r)); // heard after the relay's own listener
    own.destroy();
    await gone;
    expect(b.seen.closed).toBe(0);
  });
});
