import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { LxdClient, Operation } from './client';
import { ExecStream } from './exec-stream';

/**
 * An exec operation's four websockets, served as LXD serves them: the program starts once all four are connected.
 * This one lets the program's first bytes reach the client on stdout before the client has seen the last websocket
 * open (LXD answers that upgrade only after the client has processed the greeting: a ping on stdout sent after it
 * is answered first), which is what a busy host does to 40 viewers connecting at once.
 */
async function lxdExecServer(greeting: string) {
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer();
  const open = new Map<string, WebSocket>();
  let last: { req: http.IncomingMessage; socket: import('node:stream').Duplex; head: Buffer } | null = null;
  const accept = (req: http.IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) =>
    new Promise<WebSocket>((resolve) => wss.handleUpgrade(req, socket, head, resolve));
  let resolveStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (resolveStarted = resolve));
  // Once every upgrade was asked for, the program starts and speaks first; the control socket's upgrade is answered after.
  const startWhenAllAsked = async () => {
    if (!last || open.size < 3) return;
    const stdout = open.get('stdout')!;
    stdout.send(Buffer.from(greeting), { binary: true });
    await new Promise<void>((resolve) => {
      stdout.once('pong', () => resolve());
      stdout.ping();
    });
    await accept(last.req, last.socket, last.head);
    // An echo of stdin, so the client can tell when everything sent before its own bytes has come.
    open.get('stdin')!.on('message', (data) => stdout.send(data as Buffer, { binary: true }));
    resolveStarted();
  };
  server.on('upgrade', async (req, socket, head) => {
    const secret = new URL(req.url!, 'http://x').searchParams.get('secret')!;
    if (secret === 'control') last = { req, socket, head };
    else open.set(secret, await accept(req, socket, head));
    await startWhenAllAsked();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client: LxdClient = {
    project: 'test',
    get: () => Promise.reject(new Error('not used')),
    send: () => Promise.reject(new Error('not used')),
    begin: async () => ({ id: 'op', metadata: { fds: { '0': 'stdin', '1': 'stdout', '2': 'stderr', control: 'control' } } }) as unknown as Operation,
    websocket: (_op, secret) => new WebSocket(`ws://127.0.0.1:${port}/?secret=${secret}`),
    close: () => undefined,
  };
  return {
    client,
    started,
    close: () => {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('ExecStream', () => {
  let cleanup: () => void = () => undefined;
  afterEach(() => cleanup());

  it("keeps the program's first bytes when they come before the last websocket opens", async () => {
    const lxd = await lxdExecServer('RFB 003.008\n');
    cleanup = lxd.close;
    const stream = new ExecStream(lxd.client, 'hd-x', ['socat', '-', 'UNIX-CONNECT:/run/hyperdesk/vnc.sock']);
    let read = '';
    stream.on('data', (d: Buffer) => (read += d.toString()));
    await new Promise((resolve) => stream.once('connect', resolve));
    await lxd.started;
    stream.write('hello\n');
    await new Promise<void>((resolve) => stream.on('data', () => read.endsWith('hello\n') && resolve()));
    expect(read).toBe('RFB 003.008\nhello\n');
    stream.destroy();
  });

  it('holds an answer to those first bytes until stdin opens, then sends it', async () => {
    const lxd = await lxdExecServer('RFB 003.008\n');
    cleanup = lxd.close;
    const stream = new ExecStream(lxd.client, 'hd-x', ['socat', '-', 'UNIX-CONNECT:/run/hyperdesk/vnc.sock']);
    let read = '';
    let connected = false;
    let answeredEarly = false;
    stream.once('connect', () => (connected = true));
    const echoed = new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      stream.on('data', (d: Buffer) => {
        read += d.toString();
        if (read === 'RFB 003.008\n') {
          answeredEarly = !connected;
          stream.write('RFB 003.008\n'); // a VNC client's answer, written as the greeting arrives
        }
        if (read === 'RFB 003.008\nRFB 003.008\n') resolve();
      });
    });
    await echoed;
    expect(answeredEarly).toBe(true);
    stream.destroy();
  });

  it('fails a write held for stdin when the stream ends first', async () => {
    const lxd = await lxdExecServer('RFB 003.008\n');
    cleanup = lxd.close;
    const stream = new ExecStream(lxd.client, 'hd-x', ['socat', '-', 'UNIX-CONNECT:/run/hyperdesk/vnc.sock']);
    stream.on('error', () => undefined);
    const result = new Promise<Error | null | undefined>((resolve) => stream.write('early', (err) => resolve(err)));
    stream.destroy();
    expect(String(await result)).toMatch(/not connected|destroyed/);
  });
});
