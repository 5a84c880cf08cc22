import { connect } from 'node:net';
import zlib from 'node:zlib';
import type { Endpoint } from '../src/modules/machines/providers/types';

/** A VNC server's address: a TCP port on loopback, or a socket address as providers report it. */
type Target = number | Endpoint;
const dial = (t: Target, host = '127.0.0.1') => (typeof t === 'number' ? connect({ host, port: t }) : t.open());

/** A test's own socket (in a directory only the test writes), as an endpoint. */
export const trustedUnixSocket = (p: string): Endpoint => ({ ref: { path: p }, open: () => connect(p) });

/**
 * Completes an RFB handshake (version, security "None", ClientInit, ServerInit) with a VNC server and answers
 * what the server announced: framebuffer size and desktop name.
 */
export function vncHandshake(target: Target, host = '127.0.0.1', timeoutMs = 5000): Promise<{ version: string; width: number; height: number; name: string }> {
  return new Promise((resolve, reject) => {
    const s = dial(target, host);
    let buf = Buffer.alloc(0);
    let step: 'version' | 'security' | 'result' | 'init' = 'version';
    let version = '';
    const timer = setTimeout(() => fail(new Error('VNC handshake timed out')), timeoutMs);
    const fail = (e: Error) => {
      clearTimeout(timer);
      s.destroy();
      reject(e);
    };
    s.on('error', fail);
    s.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk as Buffer]);
      for (;;) {
        if (step === 'version') {
          if (buf.length < 12) return;
          version = buf.subarray(0, 12).toString('latin1');
          if (!/^RFB 003\.00\d\n$/.test(version)) return fail(new Error(`not RFB: ${JSON.stringify(version)}`));
          buf = buf.subarray(12);
          s.write('RFB 003.008\n');
          step = 'security';
        } else if (step === 'security') {
          if (buf.length < 1) return;
          const n = buf[0]!;
          if (n === 0) return fail(new Error('server refused the connection'));
          if (buf.length < 1 + n) return;
          const types = [...buf.subarray(1, 1 + n)];
          if (!types.includes(1)) return fail(new Error(`no "None" security type: ${types}`));
          buf = buf.subarray(1 + n);
          s.write(Buffer.from([1]));
          step = 'result';
        } else if (step === 'result') {
          if (buf.length < 4) return;
          if (buf.readUInt32BE(0) !== 0) return fail(new Error('security handshake failed'));
          buf = buf.subarray(4);
          s.write(Buffer.from([1])); // ClientInit: shared
          step = 'init';
        } else {
          if (buf.length < 24) return;
          const len = buf.readUInt32BE(20);
          if (buf.length < 24 + len) return;
          clearTimeout(timer);
          const out = { version: version.trim(), width: buf.readUInt16BE(0), height: buf.readUInt16BE(2), name: buf.subarray(24, 24 + len).toString('utf8') };
          s.destroy();
          return resolve(out);
        }
      }
    });
  });
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Reads one full frame over RFB (raw encoding, 32 bpp) and answers it as a binary PPM image. */
export function vncScreenshot(target: Target, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = dial(target);
    let buf = Buffer.alloc(0);
    let step = 0;
    let w = 0;
    let h = 0;
    let rgb: Buffer;
    let rects = 0;
    const timer = setTimeout(() => (s.destroy(), reject(new Error('screenshot timed out'))), timeoutMs);
    s.on('error', reject);
    s.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk as Buffer]);
      for (;;) {
        if (step === 0 && buf.length >= 12) {
          buf = buf.subarray(12);
          s.write('RFB 003.008\n');
          step = 1;
        } else if (step === 1 && buf.length >= 1 && buf.length >= 1 + buf[0]!) {
          buf = buf.subarray(1 + buf[0]!);
          s.write(Buffer.from([1]));
          step = 2;
        } else if (step === 2 && buf.length >= 4) {
          buf = buf.subarray(4);
          s.write(Buffer.from([1]));
          step = 3;
        } else if (step === 3 && buf.length >= 24 && buf.length >= 24 + buf.readUInt32BE(20)) {
          w = buf.readUInt16BE(0);
          h = buf.readUInt16BE(2);
          buf = buf.subarray(24 + buf.readUInt32BE(20));
          rgb = Buffer.alloc(w * h * 3);
          // SetPixelFormat 32bpp little-endian true colour (r<<16|g<<8|b), SetEncodings [raw], full update request.
          const pf = Buffer.alloc(20);
          pf.writeUInt8(0, 0);
          Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0]).copy(pf, 4);
          s.write(pf);
          s.write(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0]));
          const req = Buffer.alloc(10);
          req.writeUInt8(3, 0);
          req.writeUInt16BE(w, 6);
          req.writeUInt16BE(h, 8);
          s.write(req);
          step = 4;
        } else if (step === 4 && buf.length >= 4) {
          if (buf[0] !== 0) return reject(new Error(`unexpected message ${buf[0]}`));
          rects = buf.readUInt16BE(2);
          buf = buf.subarray(4);
          step = 5;
        } else if (step === 5 && rects > 0 && buf.length >= 12) {
          const [x, y, rw, rh] = [buf.readUInt16BE(0), buf.readUInt16BE(2), buf.readUInt16BE(4), buf.readUInt16BE(6)];
          if (buf.length < 12 + rw * rh * 4) return;
          for (let j = 0; j < rh; j++)
            for (let i = 0; i < rw; i++) {
              const o = 12 + (j * rw + i) * 4;
              const p = ((y + j) * w + x + i) * 3;
              rgb[p] = buf[o + 2]!;
              rgb[p + 1] = buf[o + 1]!;
              rgb[p + 2] = buf[o]!;
            }
          buf = buf.subarray(12 + rw * rh * 4);
          if (--rects === 0) {
            clearTimeout(timer);
            s.destroy();
            return resolve(Buffer.concat([Buffer.from(`P6 ${w} ${h} 255\n`), rgb]));
          }
        } else return;
      }
    });
  });
}

/** Encodes a binary PPM (P6) as PNG, so a desktop screenshot can be looked at. */
export function ppmToPng(ppm: Buffer): Buffer {
  const header = ppm.subarray(0, 40).toString('latin1').match(/^P6 (\d+) (\d+) 255\n/)!;
  const [w, h] = [Number(header[1]), Number(header[2])];
  const pixels = ppm.subarray(header[0].length);
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) pixels.copy(raw, y * (w * 3 + 1) + 1, y * w * 3, (y + 1) * w * 3);
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  Buffer.from([8, 2, 0, 0, 0]).copy(ihdr, 8);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
