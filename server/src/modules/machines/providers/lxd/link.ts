import { Duplex } from 'node:stream';
import type { LxdClient } from './client';
import { ExecStream } from './exec-stream';
import { LINK_SCRIPT } from './link-script';

/** Frame types (./link-script.ts has the other end). */
const OPEN = 1;
const DATA = 2;
const CLOSE = 3;
const CREDIT = 4;
const OPENED = 5;
const HEALTH = 6;
const HEADER = 9;
const MAX_PAYLOAD = 65536;
/** What either end may send on a channel before the other gives credit back. */
const WINDOW = 262144;
/**
 * Credit goes back in pieces of at least this much (a quarter of the window: the sender never runs dry while some is
 * held back). One CREDIT per DATA frame was one more write to LXD for every frame a viewer received.
 */
const CREDIT_BATCH = WINDOW / 4;

/** How often the link asks the desktop's VNC server for its greeting, inside the instance. */
export const HEALTH_EVERY_S = 4;
/** A link whose last "up" (or "down") is younger than this speaks for the desktop. */
const FRESH_MS = 2.5 * HEALTH_EVERY_S * 1000;
/** A link silent this long (no beat: stopped, or its exec stalled) carries no new stream and is replaced. It beats every second. */
const SILENT_MS = 3000;

/** The sockets a link reaches, by the number the desktop's end knows them by. */
export type LinkSocket = 1 | 2;

const frame = (kind: number, channel: number, payload: Buffer = Buffer.alloc(0)) => {
  const head = Buffer.allocUnsafe(HEADER);
  head.writeUInt8(kind, 0);
  head.writeUInt32BE(channel, 1);
  head.writeUInt32BE(payload.length, 5);
  return Buffer.concat([head, payload]);
};
const credit = (n: number) => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
};

/** One byte stream through a link, like a net.Socket: 'connect' once the desktop's end reached the socket. */
class Channel extends Duplex {
  /** Bytes this side may still send before the desktop's end gives credit back. */
  private sendCredit = WINDOW;
  /** Bytes the desktop's end may still send before this side gives credit back. */
  private recvWindow = WINDOW;
  /** Delivered bytes not yet given back as credit (the reader is behind). */
  private owed = 0;
  /** Read bytes held back until there is a CREDIT_BATCH of them to give back. */
  private unreturned = 0;
  private pending: { buf: Buffer; cb: (err?: Error | null) => void } | null = null;
  private ended = false;

  constructor(
    private readonly link: DesktopLink,
    readonly id: number,
  ) {
    super({ allowHalfOpen: false });
  }

  opened(): void {
    this.emit('connect');
  }

  /** Data from the desktop's end; false when it sent past the window it was given (the link is then ended). */
  received(payload: Buffer): boolean {
    if (payload.length > this.recvWindow) return false;
    this.recvWindow -= payload.length;
    if (this.push(payload)) this.giveBack(payload.length);
    else this.owed += payload.length;
    return true;
  }

  credited(n: number): void {
    this.sendCredit += n;
    this.pump();
  }

  /** The desktop's end closed the socket (or never reached it). */
  closedThere(): void {
    this.ended = true;
    this.push(null);
    // A write waiting for credit would wait for ever: nothing more is taken there.
    if (this.pending || this.writableEnded || !this.writable) this.destroy();
  }

  private giveBack(n: number): void {
    this.unreturned += n;
    if (this.unreturned < CREDIT_BATCH) return;
    this.recvWindow += this.unreturned;
    this.link.send(frame(CREDIT, this.id, credit(this.unreturned)));
    this.unreturned = 0;
  }

  private pump(): void {
    const p = this.pending;
    if (!p) return;
    while (p.buf.length && this.sendCredit > 0) {
      const n = Math.min(p.buf.length, MAX_PAYLOAD, this.sendCredit);
      this.link.send(frame(DATA, this.id, p.buf.subarray(0, n)));
      this.sendCredit -= n;
      p.buf = p.buf.subarray(n);
    }
    if (!p.buf.length) {
      this.pending = null;
      p.cb();
    }
  }

  override _read(): void {
    if (this.owed) {
      const n = this.owed;
      this.owed = 0;
      this.giveBack(n);
    }
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.ended) return cb(new Error('the desktop closed the connection'));
    this.pending = { buf: chunk, cb };
    this.pump();
  }

  override _final(cb: (err?: Error | null) => void): void {
    // The desktop's end closes the whole socket on CLOSE: nothing more will be read either.
    if (!this.ended) {
      this.link.send(frame(CLOSE, this.id));
      this.ended = true;
      this.push(null);
    }
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.ended) this.link.send(frame(CLOSE, this.id));
    this.ended = true;
    this.link.forget(this.id);
    const p = this.pending;
    this.pending = null;
    p?.cb(err ?? new Error('closed'));
    cb(err);
  }
}

/**
 * A desktop's link: one long-lived exec (./link-script.ts, as the desktop's user) that carries every viewer's
 * stream to the desktop's sockets and reports the VNC server's health. Its frames come from a program the tenant
 * can replace, so they are checked: a frame too long, of an unknown kind or past a channel's window ends the link
 * (and its channels); the tenant can only hurt streams of its own desktop.
 */
export class DesktopLink {
  ready = false;
  upAt = 0;
  downAt = 0;
  healthAt = Date.now();
  private channels = new Map<number, Channel>();
  private nextId = 1;
  private buf: Buffer = Buffer.alloc(0);

  /**
   * `stream`: the desktop's end's stdin and stdout, emitting 'connect' once it runs (an ExecStream). `onUp`: the
   * desktop's VNC server greeted where it had not (its start, or after it was down).
   */
  constructor(
    readonly stream: Duplex,
    onGone: () => void,
    private readonly onUp: () => void = () => {},
  ) {
    this.stream.once('connect', () => (this.ready = true));
    this.stream.on('data', (chunk: Buffer) => this.read(chunk));
    let ended = false;
    const gone = () => {
      if (ended) return;
      ended = true;
      this.ready = false;
      for (const c of this.channels.values()) c.destroy(new Error('the desktop link closed'));
      this.channels.clear();
      onGone();
    };
    this.stream.once('error', gone);
    this.stream.once('close', gone);
    this.stream.once('end', () => this.stream.destroy());
  }

  open(socket: LinkSocket, wait: boolean): Channel {
    const id = this.nextId++;
    const channel = new Channel(this, id);
    this.channels.set(id, channel);
    this.send(frame(OPEN, id, Buffer.from(wait ? [socket, 0x77] : [socket])));
    return channel;
  }

  /** Frames sent in one turn of the event loop, written to the desktop's end together. */
  private outgoing: Buffer[] = [];

  send(data: Buffer): void {
    if (this.outgoing.push(data) > 1) return;
    queueMicrotask(() => {
      const out = this.outgoing;
      this.outgoing = [];
      if (!this.stream.destroyed) this.stream.write(out.length === 1 ? out[0]! : Buffer.concat(out));
    });
  }

  forget(id: number): void {
    this.channels.delete(id);
  }

  private read(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= HEADER) {
      const kind = this.buf.readUInt8(0);
      const id = this.buf.readUInt32BE(1);
      const n = this.buf.readUInt32BE(5);
      if (n > MAX_PAYLOAD || kind < DATA || kind > HEALTH) return void this.stream.destroy(new Error('the desktop link sent a bad frame'));
      if (this.buf.length < HEADER + n) break;
      const payload = this.buf.subarray(HEADER, HEADER + n);
      this.buf = this.buf.subarray(HEADER + n);
      if (!this.frame(kind, id, payload)) return void this.stream.destroy(new Error('the desktop link broke its window'));
    }
  }

  private frame(kind: number, id: number, payload: Buffer): boolean {
    if (kind === HEALTH) {
      this.healthAt = Date.now();
      const said = payload.toString('latin1');
      if (said === 'up') {
        const was = this.upAt;
        this.upAt = this.healthAt;
        if (!was) this.onUp();
      } else if (said !== 'beat') [this.upAt, this.downAt] = [0, this.healthAt];
      return true;
    }
    const c = this.channels.get(id);
    if (!c) return true; // a channel this side already closed: its last frames cross the CLOSE
    if (kind === OPENED) c.opened();
    else if (kind === CLOSE) c.closedThere();
    else if (kind === CREDIT && payload.length === 4) c.credited(payload.readUInt32BE(0));
    else if (kind === DATA) return c.received(Buffer.from(payload));
    return true;
  }
}

export interface DesktopLinks {
  /**
   * What the instance's link last saw of its VNC server: `up` (it greeted within the last few rounds), `down` (it did
   * not, lately), or null (no live link, or nothing said lately).
   */
  health(instance: string): 'up' | 'down' | null;
  /** Starts a link to a running instance (no-op while a live one runs). */
  ensure(instance: string): void;
  /** Ends an instance's link (it stopped; the exec ends with it anyway). */
  drop(instance: string): void;
  /** A stream to one of the desktop's sockets through its link; null while it has no live link. */
  open(instance: string, socket: LinkSocket, wait: boolean): Duplex | null;
}

/**
 * Links to the running desktops (see DesktopLink). The reconciler looks at every online desktop every few seconds and
 * every viewer needs a stream to a socket inside one; without a link each of those was an exec of its own.
 */
export function createDesktopLinks(lxd: LxdClient, onUp: (instance: string) => void = () => {}): DesktopLinks {
  const links = new Map<string, DesktopLink>();

  function start(instance: string): void {
    const program = new ExecStream(lxd, instance, ['python3', '-c', LINK_SCRIPT, String(HEALTH_EVERY_S)]);
    const link: DesktopLink = new DesktopLink(
      program,
      () => {
        if (links.get(instance) === link) links.delete(instance);
      },
      () => onUp(instance),
    );
    links.set(instance, link);
  }

  return {
    health(instance) {
      const l = links.get(instance);
      const now = Date.now();
      if (!l || now - l.healthAt >= SILENT_MS) return null;
      if (now - l.upAt < FRESH_MS) return 'up';
      // A new link that has not asked yet counts as "down": the desktop it was started with is still coming up.
      return now - l.downAt < FRESH_MS || (!l.upAt && !l.downAt) ? 'down' : null;
    },
    ensure(instance) {
      const l = links.get(instance);
      if (l && Date.now() - l.healthAt < SILENT_MS) return;
      l?.stream.destroy();
      start(instance);
    },
    drop(instance) {
      links.get(instance)?.stream.destroy();
      links.delete(instance);
    },
    open(instance, socket, wait) {
      const l = links.get(instance);
      return l?.ready && Date.now() - l.healthAt < SILENT_MS ? l.open(socket, wait) : null;
    },
  };
}
