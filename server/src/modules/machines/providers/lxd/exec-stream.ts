import { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { LxdClient, Operation } from './client';

/** The desktop's user inside every instance (the image makes it uid 1000). */
export const DESKTOP_UID = 1000;

/** An exec operation's websockets: stdout at once, the others when all four are open. */
export interface ExecSockets {
  /** All four, to close them. */
  sockets: WebSocket[];
  stdout: WebSocket;
  opened: Promise<{ stdin: WebSocket; stderr: WebSocket; control: WebSocket }>;
}

/**
 * Connects an exec operation's four websockets (non-interactive, `wait-for-websocket`). LXD starts the program once
 * all four are connected, and its first bytes can come in on stdout before this side has seen the last one open
 * (found with 40 viewers connecting at once: the desktop's greeting was lost and the viewer waited for ever), so the
 * caller listens to `stdout` in the same turn, before `opened`.
 */
export function connectExec(lxd: LxdClient, op: Operation): ExecSockets {
  const fds = (op.metadata as { fds?: Record<string, string> } | null)?.fds;
  if (!fds?.['0'] || !fds['1'] || !fds['2'] || !fds.control) throw new Error('LXD exec gave no websockets');
  const sockets: WebSocket[] = [];
  const connect = (secret: string) => {
    const ws = lxd.websocket(op.id, secret);
    sockets.push(ws);
    return new Promise<WebSocket>((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  };
  const stdoutOpen = connect(fds['1']);
  const rest = Promise.all([connect(fds['0']), connect(fds['2']), connect(fds.control)]);
  const opened = Promise.all([stdoutOpen, rest]).then(([, [stdin, stderr, control]]) => ({ stdin, stderr, control }));
  return { sockets, stdout: sockets[0]!, opened };
}

/**
 * A byte stream to a program run inside an instance through LXD's exec API: its stdin and stdout as one Duplex
 * (stderr is read and dropped). Emits 'connect' once every websocket of the exec is open (LXD starts the program
 * then). Authenticated by the deployment's client certificate and run as the desktop's own user, so it can reach
 * only what that user inside that instance can: there is no host path on the way for a tenant to redirect.
 */
export class ExecStream extends Duplex {
  private stdin: WebSocket | null = null;
  private stdout: WebSocket | null = null;
  private sockets: WebSocket[] = [];
  private control: WebSocket | null = null;

  constructor(
    private readonly lxd: LxdClient,
    instance: string,
    command: string[],
  ) {
    super({ allowHalfOpen: false });
    void this.begin(instance, command).catch((err: Error) => this.destroy(err));
  }

  private async begin(instance: string, command: string[]): Promise<void> {
    const op = await this.lxd.begin('POST', `/1.0/instances/${instance}/exec`, {
      command,
      environment: { HOME: '/home/user', PATH: '/usr/local/bin:/usr/bin:/bin' },
      'wait-for-websocket': true,
      interactive: false,
      user: DESKTOP_UID,
      group: DESKTOP_UID,
      cwd: '/',
    });
    if (this.destroyed) return;
    const exec = connectExec(this.lxd, op);
    this.sockets = exec.sockets;
    for (const ws of exec.sockets) ws.on('error', (err) => this.destroy(err));
    const stdout = (this.stdout = exec.stdout);
    stdout.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary && data.length === 0) return;
      if (!this.push(data)) stdout.pause();
    });
    stdout.once('close', () => this.push(null));
    const { stdin, stderr, control } = await exec.opened;
    if (this.destroyed) return this.closeAll();
    this.stdin = stdin;
    this.control = control;
    stderr.on('message', () => {});
    stdin.once('close', () => this.destroy());
    this.emit('connect');
  }

  override _read(): void {
    this.stdout?.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    const stdin = this.stdin;
    if (stdin) return stdin.send(chunk, { binary: true }, (err) => cb(err ?? null));
    // The program's first bytes can arrive before the last of the exec's websockets (stdin) opens, and a client may
    // answer them at once: its answer waits for stdin (or fails with the stream).
    const ready = () => {
      this.off('close', gone);
      this._write(chunk, _enc, cb);
    };
    const gone = () => {
      this.off('connect', ready);
      cb(new Error('not connected'));
    };
    this.once('connect', ready);
    this.once('close', gone);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.stdin?.close();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.closeAll();
    cb(err);
  }

  private closeAll(): void {
    // The program ends with its stdin (socat), and is sent SIGTERM besides, so nothing lingers in the instance.
    try {
      if (this.control?.readyState === 1) this.control.send(JSON.stringify({ command: 'signal', signal: 15 }));
    } catch {
      /* closing anyway */
    }
    for (const ws of this.sockets) ws.terminate();
  }
}

/**
 * How long a connection waits inside the instance for a socket that is not there yet, in seconds: here (socat's
 * retries) and on the desktop's link (link-script.ts). The agent listens once Python has loaded GStreamer, which took
 * more than the 3 s this was on a CI host busy with other desktops, and the tab then showed VNC instead of WebRTC; the
 * tab itself gives the agent's offer 10 s.
 */
export const SOCKET_WAIT_S = 8;
/** socat's form of it: a try every 0.1 s. */
export const SOCKET_RETRY = `retry=${SOCKET_WAIT_S * 10},interval=0.1`;

/**
 * A stream to a Unix socket inside the instance (socat as the desktop's user). With `wait`, a socket that is not
 * there yet (the agent starts a moment after the desktop answers; the desktop session starts again after its X server ends) is waited for up
 * to 3 s inside, so a tab can dial without first probing the desktop through another exec; without, a missing
 * socket ends the stream at once (the reconciler's health probe).
 */
export function socketInInstance(lxd: LxdClient, instance: string, socketPath: string, wait = false): ExecStream {
  return new ExecStream(lxd, instance, ['socat', '-', `UNIX-CONNECT:${socketPath}${wait ? `,${SOCKET_RETRY}` : ''}`]);
}
