import { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { LxdClient } from './client';

/** The desktop's user inside every instance (the image makes it uid 1000). */
export const DESKTOP_UID = 1000;

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
    const fds = (op.metadata as { fds?: Record<string, string> } | null)?.fds;
    if (!fds?.['0'] || !fds['1'] || !fds['2'] || !fds.control) throw new Error('LXD exec gave no websockets');
    const connect = (secret: string) => {
      const ws = this.lxd.websocket(op.id, secret);
      this.sockets.push(ws);
      ws.on('error', (err) => this.destroy(err));
      const opened = new Promise<WebSocket>((resolve, reject) => {
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
      return { ws, opened };
    };
    // LXD starts the program once every websocket is connected, and its first bytes can come in on stdout before this
    // side has seen the last websocket open (found with 40 viewers at once: the desktop's greeting was lost and the
    // viewer waited for ever), so stdout is read from the moment it exists.
    const out = connect(fds['1']);
    const stdout = (this.stdout = out.ws);
    stdout.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary && data.length === 0) return;
      if (!this.push(data)) stdout.pause();
    });
    stdout.once('close', () => this.push(null));
    const rest = [fds['0'], fds['2'], fds.control].map((secret) => connect(secret).opened);
    const [, stdin, stderr, control] = await Promise.all([out.opened, ...rest]);
    if (this.destroyed) return this.closeAll();
    this.stdin = stdin!;
    this.control = control!;
    stderr!.on('message', () => {});
    stdin!.once('close', () => this.destroy());
    this.emit('connect');
  }

  override _read(): void {
    this.stdout?.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (!this.stdin) return cb(new Error('not connected'));
    this.stdin.send(chunk, { binary: true }, (err) => cb(err ?? null));
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

/** How long a connection waits inside the instance for a socket that is not there yet: 30 tries, 0.1 s apart. */
export const SOCKET_RETRY = 'retry=30,interval=0.1';

/**
 * A stream to a Unix socket inside the instance (socat as the desktop's user). With `wait`, a socket that is not
 * there yet (the agent starts a moment after the desktop answers; x11vnc restarts after a resize) is waited for up
 * to 3 s inside, so a tab can dial without first probing the desktop through another exec; without, a missing
 * socket ends the stream at once (the reconciler's health probe).
 */
export function socketInInstance(lxd: LxdClient, instance: string, socketPath: string, wait = false): ExecStream {
  return new ExecStream(lxd, instance, ['socat', '-', `UNIX-CONNECT:${socketPath}${wait ? `,${SOCKET_RETRY}` : ''}`]);
}
