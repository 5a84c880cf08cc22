import type { Duplex } from 'node:stream';
import type { WallInputEvent } from '@hyperdesk/contract';

const HANDSHAKE_TIMEOUT_MS = 10_000;
const MAX_HANDSHAKE_BYTES = 4096;

/**
 * A VNC client that only types and points: the server's own connection to the desktop's Xvnc (shared, so the
 * student's session stays), used for a take-over. It never asks for a picture (no FramebufferUpdateRequest), and
 * whatever the desktop sends after the handshake (its clipboard, a bell) is read and dropped: nothing from the
 * desktop reaches the instructor this way. Pointer positions arrive as 0..1 of the picture and are mapped onto the
 * screen size the server announced.
 */
export class RfbInput {
  private width = 0;
  private height = 0;
  private ready: Promise<void>;
  private closed = false;

  constructor(private readonly sock: Duplex) {
    this.ready = this.handshake();
    this.ready.catch(() => this.close());
    sock.on('error', () => this.close());
    sock.on('close', () => {
      this.closed = true;
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private handshake(): Promise<void> {
    return new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0);
      let step: 'version' | 'security' | 'result' | 'init' = 'version';
      const timer = setTimeout(() => fail('VNC handshake timed out'), HANDSHAKE_TIMEOUT_MS);
      const fail = (why: string) => {
        clearTimeout(timer);
        this.sock.off('data', onData);
        reject(new Error(why));
      };
      const onData = (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (buf.length > MAX_HANDSHAKE_BYTES) return fail('VNC handshake too long');
        for (;;) {
          if (step === 'version') {
            if (buf.length < 12) return;
            if (!/^RFB 003\.00[3-8]\n$/.test(buf.subarray(0, 12).toString('latin1'))) return fail('not a VNC server');
            this.sock.write('RFB 003.008\n');
            buf = buf.subarray(12);
            step = 'security';
          } else if (step === 'security') {
            if (buf.length < 1 || buf.length < 1 + buf[0]!) return;
            const types = [...buf.subarray(1, 1 + buf[0]!)];
            if (!types.includes(1)) return fail('the VNC server wants a password');
            this.sock.write(Buffer.from([1]));
            buf = buf.subarray(1 + buf[0]!);
            step = 'result';
          } else if (step === 'result') {
            if (buf.length < 4) return;
            if (buf.readUInt32BE(0) !== 0) return fail('VNC security refused');
            this.sock.write(Buffer.from([1])); // ClientInit: shared, the student's own session stays
            buf = buf.subarray(4);
            step = 'init';
          } else {
            if (buf.length < 24) return;
            const nameLen = buf.readUInt32BE(20);
            if (buf.length < 24 + nameLen) return;
            this.width = buf.readUInt16BE(0);
            this.height = buf.readUInt16BE(2);
            clearTimeout(timer);
            this.sock.off('data', onData);
            this.sock.on('data', () => {}); // the desktop's own messages: read and dropped
            return resolve();
          }
        }
      };
      this.sock.on('data', onData);
    });
  }

  /** Sends the events in order once the handshake is done. */
  async send(events: WallInputEvent[]): Promise<void> {
    await this.ready;
    if (this.closed) throw new Error('VNC connection closed');
    const msgs = events.map((e) => {
      if (e.t === 'k') {
        const m = Buffer.alloc(8);
        m[0] = 4;
        m[1] = e.down ? 1 : 0;
        m.writeUInt32BE(e.keysym, 4);
        return m;
      }
      const m = Buffer.alloc(6);
      m[0] = 5;
      m[1] = e.buttons;
      m.writeUInt16BE(Math.min(this.width - 1, Math.round(e.x * (this.width - 1))), 2);
      m.writeUInt16BE(Math.min(this.height - 1, Math.round(e.y * (this.height - 1))), 4);
      return m;
    });
    this.sock.write(Buffer.concat(msgs));
  }

  close(): void {
    this.closed = true;
    this.sock.destroy();
  }
}
