import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import type { LxdClient, Operation } from './client';
import { createLxdFiles } from './files';

/** What the fake desktop's program does for one exec: its stdout (nothing at all: the lost output of lxd#11422). */
type Program = (args: string[]) => Buffer | null;

/**
 * LXD's exec API as the files module uses it: each exec an operation with four websockets; once all four are
 * open, the program's stdout is sent, then LXD's end-of-stream barrier (a text message), and the operation ends.
 */
async function fakeLxd(program: Program, refuseFirst = 0, exitOf: (args: string[]) => number = () => 0) {
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer();
  const execs: string[][] = [];
  const ops = new Map<string, { open: Map<string, WebSocket>; args: string[]; done: Promise<number>; finish: (code: number) => void }>();
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url!, 'http://x');
    const op = ops.get(url.searchParams.get('op')!)!;
    wss.handleUpgrade(req, socket, head, (ws) => {
      op.open.set(url.searchParams.get('secret')!, ws);
      if (op.open.size < 4) return;
      const stdout = op.open.get('1')!;
      const out = program(op.args);
      if (out) stdout.send(out, { binary: true });
      stdout.send('', { binary: false }, () => {
        stdout.close();
        op.finish(exitOf(op.args));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client: LxdClient = {
    project: 'test',
    get: async <T,>(path: string) => {
      const id = /operations\/([^/]+)\/wait/.exec(path)![1]!;
      return { status_code: 200, metadata: { return: await ops.get(id)!.done } } as T;
    },
    send: () => Promise.reject(new Error('not used')),
    begin: async (_method: string, _path: string, body: unknown) => {
      if (refuseFirst-- > 0) throw new Error('websocket: close 1006 (abnormal closure): unexpected EOF');
      const args = (body as { command: string[] }).command.slice(4); // python3 -I -c SCRIPT ...args
      execs.push(args);
      const id = `op${execs.length}`;
      let finish: (code: number) => void = () => undefined;
      const done = new Promise<number>((resolve) => (finish = resolve));
      ops.set(id, { open: new Map(), args, done, finish });
      return { id, metadata: { fds: { '0': '0', '1': '1', '2': '2', control: 'control' } } } as unknown as Operation;
    },
    websocket: (op, secret) => new WebSocket(`ws://127.0.0.1:${port}/?op=${op}&secret=${secret}`),
    close: () => undefined,
  } as LxdClient;
  return {
    files: createLxdFiles(client, (id) => `hd-${id}`, async () => null, 'pool'),
    execs,
    close: () => {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A program whose first `silent` runs give no output at all, then answers as the files script does. */
function silentThen(silent: number, answer: (args: string[]) => string): Program {
  let runs = 0;
  return (args) => (++runs <= silent ? null : Buffer.from(answer(args)));
}

const LISTING = JSON.stringify({ entries: [{ name: 'work.uproject', folder: false, size: 5, mtime: 0 }], more: 0 }) + '\n';

async function text(body: Readable): Promise<string> {
  let s = '';
  for await (const chunk of body) s += (chunk as Buffer).toString();
  return s;
}

describe('the lxd files module, when LXD loses an exec output', () => {
  let cleanup: () => void = () => undefined;
  afterEach(() => cleanup());

  it('asks a listing again and answers it', async () => {
    const lxd = await fakeLxd(silentThen(2, () => LISTING));
    cleanup = lxd.close;
    const listed = await lxd.files.list('m1', 'Downloads', 100);
    expect(listed.entries.map((e) => e.name)).toEqual(['work.uproject']);
    expect(lxd.execs).toHaveLength(3);
  });

  it('says the desktop gave no answer after three silent tries, and asks no more', async () => {
    const lxd = await fakeLxd(silentThen(5, () => LISTING));
    cleanup = lxd.close;
    await expect(lxd.files.list('m1', 'Downloads', 100)).rejects.toThrow('the desktop gave no answer');
    expect(lxd.execs).toHaveLength(3);
  });

  it('asks again when the exec failed before the program could answer', async () => {
    const lxd = await fakeLxd(() => Buffer.from(LISTING), 2);
    cleanup = lxd.close;
    expect((await lxd.files.list('m1', 'Downloads', 100)).entries).toHaveLength(1);
    expect(lxd.execs).toHaveLength(1);
  });

  it("does not ask again when the desktop answered with an error", async () => {
    const lxd = await fakeLxd(() => Buffer.from(JSON.stringify({ error: 'not-found', detail: 'no such folder' }) + '\n'));
    cleanup = lxd.close;
    await expect(lxd.files.list('m1', 'Nowhere', 100)).rejects.toThrow('no such folder');
    expect(lxd.execs).toHaveLength(1);
  });

  it('asks a download again and streams the whole file', async () => {
    const lxd = await fakeLxd(silentThen(1, () => JSON.stringify({ name: 'hand-in.txt', size: 11 }) + '\nhello world'));
    cleanup = lxd.close;
    const got = await lxd.files.download('m1', 'Downloads/hand-in.txt');
    expect(got).toMatchObject({ name: 'hand-in.txt', size: 11 });
    expect(await text(got.body)).toBe('hello world');
    expect(lxd.execs).toEqual([
      ['get', 'Downloads/hand-in.txt'],
      ['get', 'Downloads/hand-in.txt'],
    ]);
  });

  it('names an upload whose answer was lost by its mark, and sends it once', async () => {
    const lxd = await fakeLxd((args) => (args[0] === 'found' ? Buffer.from(JSON.stringify({ name: 'a (1).txt', size: 5 }) + '\n') : null));
    cleanup = lxd.close;
    const body = Readable.from([Buffer.from('hello')]);
    expect(await lxd.files.upload('m1', { dir: 'Uploads', name: 'a.txt', size: 5, body })).toEqual({ name: 'a (1).txt', size: 5 });
    const [put, found] = lxd.execs;
    expect(put).toEqual(['put', 'Uploads', 'a.txt', '5', expect.stringMatching(/^[0-9a-f]{32}$/)]);
    expect(found).toEqual(['found', 'Uploads', 'a.txt', put![4]]);
    expect(lxd.execs).toHaveLength(2);
  });

  it('never sends an upload twice: a lost answer and a lost look-up say the desktop gave no answer', async () => {
    const lxd = await fakeLxd(() => null);
    cleanup = lxd.close;
    const body = Readable.from([Buffer.from('hello')]);
    await expect(lxd.files.upload('m1', { dir: 'Uploads', name: 'a.txt', size: 5, body })).rejects.toThrow('the desktop gave no answer');
    expect(lxd.execs.map((args) => args[0])).toEqual(['put', 'found', 'found', 'found']);
  });

  it('does not look for an upload whose program failed without a word', async () => {
    const lxd = await fakeLxd(() => null, 0, () => 3);
    cleanup = lxd.close;
    const body = Readable.from([Buffer.from('hello')]);
    await expect(lxd.files.upload('m1', { dir: 'Uploads', name: 'a.txt', size: 5, body })).rejects.toThrow('the desktop gave no answer');
    expect(lxd.execs).toHaveLength(1);
  });
});
