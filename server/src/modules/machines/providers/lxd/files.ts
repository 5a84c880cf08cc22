import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type { WebSocket } from 'ws';
import { FilesError, type DesktopFiles, type FilesErrorCode, type ListedEntry } from '../desktop-files';
import type { LxdClient } from './client';
import { connectExec, DESKTOP_UID } from './exec-stream';
import { FILES_SCRIPT } from './files-script';

/** Transfers at once per machine (each is a process in the desktop and a stream through this server). */
const MAX_TRANSFERS_PER_MACHINE = 4;
/** The stdout of a list or an upload answer is one JSON line; more is not ours. */
const MAX_ANSWER_BYTES = 1 << 20;
/** After the program exited, how long its stdout may stay silent (while not held back by its reader) before it is closed. */
const STDOUT_IDLE_MS = 30_000;
/**
 * LXD 5.0 on a host at full load sometimes ends an exec's stdout before the program's first bytes reach it
 * (canonical/lxd#11422), or drops one of its websockets: a read (list, download) that got no answer at all is asked
 * again, up to this many times. An upload is not: its body was streamed into the first try; when its program ended
 * well without a word, the file is looked up by the upload's mark (`found`), a read.
 */
const READ_TRIES = 3;

interface Run {
  /** The program's stdout (with backpressure: the websocket pauses while the reader lags). */
  stdout: Readable;
  /** Resolves once stdin was sent and closed (EOF reached the program). */
  fed: Promise<void>;
  /** The program's exit code. */
  exit: Promise<number>;
  /** SIGTERM to the program, then every socket closed. */
  kill(): void;
}

/**
 * Runs FILES_SCRIPT in an instance through LXD's exec API as the desktop's user, with `input` streamed to its stdin
 * (then EOF: LXD takes a text message on stdin as the end of it) and its stdout as a stream. Unlike ExecStream (a
 * socket to a long-lived peer) this one half-closes: the program sees EOF and still answers.
 */
async function run(lxd: LxdClient, instance: string, args: string[], input?: Readable): Promise<Run> {
  const op = await lxd.begin('POST', `/1.0/instances/${instance}/exec`, {
    command: ['python3', '-I', '-c', FILES_SCRIPT, ...args],
    environment: { HOME: '/home/user', PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
    'wait-for-websocket': true,
    interactive: false,
    user: DESKTOP_UID,
    group: DESKTOP_UID,
    cwd: '/home/user',
  });
  const exec = connectExec(lxd, op);
  const { sockets, stdout: stdoutWs } = exec;
  const stdout = new PassThrough({ highWaterMark: 1 << 20 });
  stdout.on('drain', () => stdoutWs.resume());
  stdoutWs.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) return void stdout.end(); // LXD's end-of-stream barrier
    if (!stdout.write(data)) stdoutWs.pause();
  });
  stdoutWs.once('close', () => stdout.end());
  let control: WebSocket | null = null;
  const kill = () => {
    try {
      if (control?.readyState === 1) control.send(JSON.stringify({ command: 'signal', signal: 15 }));
    } catch {
      /* closing anyway */
    }
    setTimeout(() => sockets.forEach((ws) => ws.terminate()), 200).unref();
  };
  let stdinWs: WebSocket;
  let stderrWs: WebSocket;
  try {
    ({ stdin: stdinWs, stderr: stderrWs, control } = await exec.opened);
  } catch (err) {
    kill();
    throw err;
  }
  for (const ws of sockets) ws.on('error', () => undefined);
  stderrWs.on('message', () => undefined);

  const send = (data: Buffer | string, binary: boolean) =>
    new Promise<void>((resolve, reject) => stdinWs.send(data, { binary }, (err) => (err ? reject(err) : resolve())));
  const fed = new Promise<void>((resolve, reject) => {
    const end = () => send('', false).then(resolve, reject);
    if (!input) return void end();
    const stopFeeding = (err: Error) => {
      input.off('data', onData);
      reject(err);
    };
    // Not `for await`: leaving one early would destroy the request, and the client could not read why.
    const onData = (chunk: Buffer) => {
      input.pause();
      send(chunk, true).then(() => input.resume(), stopFeeding);
    };
    input.on('data', onData);
    input.once('end', end);
    input.once('error', stopFeeding);
    input.once('close', () => {
      if (!input.readableEnded) stopFeeding(new Error('the upload ended early'));
    });
  });
  fed.catch(() => kill());

  /**
   * The program may exit while the last of its output still waits in LXD and in this socket (a download whose
   * reader is slower than the disk): stdout ends when LXD ends it. Only one that stays silent while nobody holds it
   * back is closed, so a lost end never keeps a socket open.
   */
  let lastData = Date.now();
  stdoutWs.on('message', () => (lastData = Date.now()));
  const closeStdoutWhenIdle = () => {
    const check = setInterval(() => {
      if (stdoutWs.readyState >= 2) return clearInterval(check);
      if (!stdoutWs.isPaused && Date.now() - lastData > STDOUT_IDLE_MS) {
        clearInterval(check);
        stdoutWs.close();
      }
    }, 1000);
    check.unref();
  };
  const exit = (async () => {
    for (;;) {
      const done = await lxd.get<{ status_code: number; metadata: { return?: number } | null }>(`/1.0/operations/${op.id}/wait?timeout=60`);
      if (done.status_code >= 200) {
        setTimeout(() => sockets.forEach((ws) => ws !== stdoutWs && ws.close()), 100).unref();
        closeStdoutWhenIdle();
        return done.metadata?.return ?? -1;
      }
    }
  })();
  exit.catch(() => undefined); // a caller that does not wait for it still gets its stream
  return { stdout, fed, exit, kill };
}

/** Reads a stream's first line (up to a bound); the stream is left paused just after it, the bytes past it in `rest`. */
function firstLine(stream: Readable): Promise<{ line: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (line: string, rest: Buffer) => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      stream.pause();
      resolve({ line, rest });
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(10);
      if (nl >= 0) done(buf.subarray(0, nl).toString('utf8'), buf.subarray(nl + 1));
      else if (buf.length > MAX_ANSWER_BYTES) done('', Buffer.alloc(0));
    };
    const onEnd = () => done(buf.toString('utf8'), Buffer.alloc(0));
    const onError = (err: Error) => {
      stream.off('data', onData).off('end', onEnd);
      reject(err);
    };
    stream.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

type Answer<T> = T | { error: FilesErrorCode; detail?: string };

function parse<T extends object>(line: string): T {
  let parsed: Answer<T>;
  try {
    parsed = JSON.parse(line) as Answer<T>;
  } catch {
    throw new FilesError('io', 'the desktop gave no answer');
  }
  if ('error' in parsed) throw new FilesError(parsed.error, parsed.detail || parsed.error);
  return parsed;
}

interface Get {
  r: Run;
  head: { name: string; size: number };
  /** What came after the header line in its chunk: the file's first bytes. */
  rest: Buffer;
}

/**
 * Runs a read (list, get) and answers its first line, trying again when LXD lost it: no answer at all, or the exec
 * failed before the program could answer (LXD under full load, canonical/lxd#11422). The run is answered open: a
 * `get`'s file follows its first line.
 */
async function answered(lxd: LxdClient, instance: string, args: string[]): Promise<{ r: Run; line: string; rest: Buffer }> {
  for (let tries = 1; ; tries++) {
    let r: Run | undefined;
    try {
      r = await run(lxd, instance, args);
      const first = await firstLine(r.stdout);
      if (first.line || tries >= READ_TRIES) return { r, ...first };
    } catch (err) {
      if (tries >= READ_TRIES) throw err;
    }
    r?.kill();
  }
}

/** Starts the script's `get` of a file: its header line read (name and size), the file's bytes still to come. */
async function startGet(lxd: LxdClient, instance: string, path: string): Promise<Get> {
  const { r, line, rest } = await answered(lxd, instance, ['get', path]);
  try {
    return { r, head: parse<{ name: string; size: number }>(line), rest };
  } catch (err) {
    r.kill();
    throw err;
  }
}

/**
 * The file's bytes as a stream with backpressure: it ends when the script sent all `size` bytes, fails when it sent
 * fewer, and stops the script when the reader goes away early. `release` runs when the stream closes.
 */
function bodyOf({ r, head, rest }: Get, release: () => void): PassThrough {
  const body = new PassThrough({ highWaterMark: 1 << 20 });
  body.once('close', release);
  body.write(rest);
  let sent = rest.length;
  r.stdout.on('data', (chunk: Buffer) => {
    sent += chunk.length;
    if (!body.write(chunk)) r.stdout.pause();
  });
  body.on('drain', () => r.stdout.resume());
  r.stdout.once('end', () => (sent === head.size ? body.end() : body.destroy(new FilesError('incomplete', `${sent} of ${head.size} bytes`))));
  body.once('close', () => {
    if (sent < head.size) r.kill();
  });
  r.stdout.resume();
  return body;
}

/** The lxd provider's DesktopFiles: every operation a python3 process in the instance, as the desktop's user. */
export function createLxdFiles(lxd: LxdClient, instanceOf: (machineId: string) => string, homeVolumeOf: (machineId: string) => Promise<string | null>, pool: string): DesktopFiles {
  const busy = new Map<string, number>();
  /** Takes one of machineId's transfer places; answers the function that gives it back (once). */
  function take(machineId: string): () => void {
    const n = busy.get(machineId) ?? 0;
    if (n >= MAX_TRANSFERS_PER_MACHINE) throw new FilesError('too-many');
    busy.set(machineId, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (busy.get(machineId) ?? 1) - 1;
      if (left) busy.set(machineId, left);
      else busy.delete(machineId);
    };
  }

  /** The name an upload's file got, read from the desktop by the upload's mark: its program ended well, unheard. */
  async function markedUpload(instance: string, f: { dir: string; name: string }, mark: string) {
    const { r, line } = await answered(lxd, instance, ['found', f.dir, f.name, mark]);
    await r.exit;
    return parse<{ name: string; size: number }>(line);
  }

  return {
    async list(machineId, dir, max) {
      const { r, line } = await answered(lxd, instanceOf(machineId), ['list', dir, String(max)]);
      await r.exit;
      return parse<{ entries: ListedEntry[]; more: number }>(line);
    },

    async upload(machineId, f) {
      const release = take(machineId);
      try {
        const instance = instanceOf(machineId);
        const mark = randomBytes(16).toString('hex');
        const r = await run(lxd, instance, ['put', f.dir, f.name, String(f.size), mark], f.body);
        // The answer comes once the file is complete, or early when the program failed (a full disk): then the
        // rest of the body is not fed any more (the caller drains it and says why).
        const { line } = await firstLine(r.stdout);
        r.stdout.resume();
        if (!line && (await r.exit) === 0) return await markedUpload(instance, f, mark);
        let answer: { name: string; size: number };
        try {
          answer = parse<{ name: string; size: number }>(line);
        } catch (err) {
          r.kill();
          throw err;
        }
        await r.exit;
        return answer;
      } finally {
        release();
      }
    },

    async download(machineId, path) {
      const release = take(machineId);
      try {
        const got = await startGet(lxd, instanceOf(machineId), path);
        return { name: got.head.name, size: got.head.size, body: bodyOf(got, release) };
      } catch (err) {
        release();
        throw err;
      }
    },

    async space(machineId) {
      const volume = await homeVolumeOf(machineId);
      if (!volume) return null;
      const state = await lxd.get<{ usage?: { used?: number; total?: number } | null }>(`/1.0/storage-pools/${pool}/volumes/custom/${volume}/state`).catch(() => null);
      const used = state?.usage?.used;
      const total = state?.usage?.total;
      if (typeof used !== 'number' || typeof total !== 'number' || total <= 0) return null;
      return { usedBytes: used, quotaBytes: total };
    },
  };
}
