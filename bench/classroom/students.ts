/**
 * Students of a class pressing Connect (bench:classroom's class start runs this as a child process): each asks for a
 * ticket (POST /v1/slot/connect/ticket) and reads the desktop through the gateway's WebSocket as the tab's VNC mode
 * does (RFB, 32-bit pixels, ZRLE), until a frame shows the desktop's content. Prints a StudentsResult as JSON.
 *
 *   node --import tsx bench/classroom/students.ts '{"base":…,"tokens":[…],"courseId":…,"together":true}'
 */
import { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { ZrleStream } from './zrle';

/** A student who has no content by then is counted as failed, with where their connection stood. */
const CONTENT_TIMEOUT_MS = 2 * 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface StudentsResult {
  connected: Connected[];
  /** Why each student who got no content did not. */
  failed: string[];
  /** CPU-seconds this process used (its RFB clients: inflating and scanning frames). */
  cpuSeconds: number;
}

/** The gateway's binary frames as a byte stream (its text frames, hello and notices, are not the desktop's). */
export function gatewayStream(url: string): Duplex {
  const ws = new WebSocket(url);
  const pending: Buffer[] = [];
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      if (ws.readyState === WebSocket.OPEN) return ws.send(chunk, { binary: true }, done);
      pending.push(chunk);
      done();
    },
    destroy(err, done) {
      ws.terminate();
      done(err);
    },
  });
  ws.on('open', () => {
    for (const p of pending.splice(0)) ws.send(p, { binary: true });
  });
  ws.on('message', (data, isBinary) => {
    if (isBinary) stream.push(data as Buffer);
  });
  ws.on('close', (code, reason) => stream.destroy(new Error(`gateway closed ${code} ${reason.toString()}`)));
  ws.on('error', (err) => stream.destroy(err));
  return stream;
}

/**
 * RFB over the stream until a frame shows the desktop's content: handshake, 32-bit true colour, ZRLE (raw allowed),
 * full update requests until the rectangles of a frame have at least `minColours` colours (an empty screen has one).
 * Read as cheaply as a viewer would (no colour counted past `minColours`): on this host the 40 clients share the cores
 * with the server and the desktops, where in a class they run on the students' own computers.
 */
function untilContent(stream: Duplex, minColours = 8): Promise<{ greeted: number }> {
  const t0 = performance.now();
  let greeted = 0;
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let step: 'version' | 'security' | 'result' | 'init' | 'update' | 'rects' = 'version';
    let w = 0;
    let h = 0;
    let rects = 0;
    const colours = new Set<number>();
    const zrle = new ZrleStream();
    let received = 0;
    const timer = setTimeout(
      () => finish(new Error(`no content after ${CONTENT_TIMEOUT_MS / 1000} s (RFB step ${step}, ${received} bytes received, ${colours.size} colours)`)),
      CONTENT_TIMEOUT_MS,
    );
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      zrle.close();
      stream.destroy();
      if (err) reject(err);
      else resolve({ greeted });
    };
    const request = () => {
      const req = Buffer.alloc(10);
      req.writeUInt8(3, 0);
      req.writeUInt16BE(w, 6);
      req.writeUInt16BE(h, 8);
      stream.write(req);
    };
    stream.on('error', (err) => finish(err));
    // The messages in order, one at a time (a ZRLE rectangle is inflated asynchronously): more data while one is being
    // read is read after it.
    let reading = false;
    let more = false;
    const read = async () => {
      if (reading) return void (more = true);
      reading = true;
      try {
        do {
          more = false;
          await readMessages();
        } while (more && !done);
      } catch (err) {
        finish(err as Error);
      } finally {
        reading = false;
      }
    };
    // Chunks are joined when the parser runs, not one by one (a frame of a few MB comes in thousands of them).
    const arrived: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      arrived.push(chunk);
      void read();
    });
    const readMessages = async () => {
      if (arrived.length) buf = Buffer.concat([buf, ...arrived.splice(0)]);
      while (!done) {
        if (step === 'version' && buf.length >= 12) {
          greeted = performance.now() - t0;
          buf = buf.subarray(12);
          stream.write('RFB 003.008\n');
          step = 'security';
        } else if (step === 'security' && buf.length >= 1 && buf.length >= 1 + buf[0]!) {
          if (!buf.subarray(1, 1 + buf[0]!).includes(1)) return finish(new Error('no "None" security type'));
          buf = buf.subarray(1 + buf[0]!);
          stream.write(Buffer.from([1]));
          step = 'result';
        } else if (step === 'result' && buf.length >= 4) {
          if (buf.readUInt32BE(0) !== 0) return finish(new Error('security handshake failed'));
          buf = buf.subarray(4);
          stream.write(Buffer.from([1])); // ClientInit: shared
          step = 'init';
        } else if (step === 'init' && buf.length >= 24 && buf.length >= 24 + buf.readUInt32BE(20)) {
          w = buf.readUInt16BE(0);
          h = buf.readUInt16BE(2);
          buf = buf.subarray(24 + buf.readUInt32BE(20));
          const pf = Buffer.alloc(20); // SetPixelFormat: 32 bpp little-endian true colour, depth 24
          Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0]).copy(pf, 4);
          stream.write(pf);
          stream.write(Buffer.from([2, 0, 0, 2, 0, 0, 0, 16, 0, 0, 0, 0])); // SetEncodings: ZRLE, raw
          request();
          step = 'update';
        } else if (step === 'update' && buf.length >= 4) {
          if (buf[0] !== 0) {
            // Another server message (bell, colour map, cut text): only cut text carries a length.
            if (buf[0] === 3 && buf.length >= 8 && buf.length >= 8 + buf.readUInt32BE(4)) buf = buf.subarray(8 + buf.readUInt32BE(4));
            else if (buf[0] === 2) buf = buf.subarray(1);
            else return;
            continue;
          }
          rects = buf.readUInt16BE(2);
          buf = buf.subarray(4);
          colours.clear();
          step = 'rects';
        } else if (step === 'rects' && buf.length >= 12) {
          const [rw, rh, enc] = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readInt32BE(8)];
          // ZRLE: a length, then zlib data; raw: 4 bytes a pixel; anything else (a size change) carries no pixels here.
          if (enc === 16 && buf.length < 16) return;
          const size = enc === 16 ? 4 + buf.readUInt32BE(12) : enc === 0 ? rw * rh * 4 : 0;
          if (buf.length < 12 + size) return;
          if (enc === 16) for (const c of await zrle.rect(buf.subarray(16, 12 + size), rw, rh, minColours)) colours.add(c);
          else for (let i = 12; i < 12 + size; i += 28) colours.add(buf.readUInt32LE(i) & 0xffffff);
          buf = buf.subarray(12 + size);
          if (enc === -223) [w, h] = [rw, rh]; // DesktopSize
          // A viewer draws each rectangle as it comes: the content shows once the rectangles so far have it.
          if (colours.size >= minColours) return finish();
          if (--rects > 0) continue;
          step = 'update';
          setTimeout(request, 100);
        } else return;
      }
    };
  });
}

export interface Connected {
  /** Connect → content. */
  ms: number;
  /** The ticket's answer; the desktop's greeting (RFB version) after the WebSocket was asked for. */
  ticket: number;
  greeted: number;
  refused: number;
}

/** POST /v1/slot/connect/ticket for a balance entry's machine or course, as the Connect tab asks. */
export async function askTicket(base: string, token: string, packId: string) {
  const res = await fetch(`${base}/v1/slot/connect/ticket`, {
    method: 'POST',
    headers: { idtoken: token, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `/v1/slot/connect?packId=${packId}` }),
  });
  return { res, body: (await res.json()) as { wsPath?: string; code?: string; message?: string } };
}

/** One student: ticket → gateway → content; answers the times and whether the ticket was refused first. */
async function connectStudent(base: string, token: string, courseId: string): Promise<Connected> {
  const t0 = performance.now();
  let refused = 0;
  for (;;) {
    const { res, body } = await askTicket(base, token, courseId);
    if (res.status === 200 && body.wsPath) {
      const ticket = performance.now() - t0;
      const { greeted } = await untilContent(gatewayStream(base.replace(/^http/, 'ws') + body.wsPath));
      return { ms: performance.now() - t0, ticket, greeted, refused };
    }
    if (res.status !== 409 || performance.now() - t0 > CONTENT_TIMEOUT_MS) throw new Error(`ticket: ${res.status} ${body.code} ${body.message}`);
    refused++;
    await sleep(250);
  }
}

async function main(): Promise<void> {
  const { base, tokens, courseId, together } = JSON.parse(process.argv[2]!) as { base: string; tokens: string[]; courseId: string; together: boolean };
  const settled: PromiseSettledResult<Connected>[] = [];
  if (together) settled.push(...(await Promise.allSettled(tokens.map((t) => connectStudent(base, t, courseId)))));
  else for (const t of tokens) settled.push(...(await Promise.allSettled([connectStudent(base, t, courseId)])));
  const result: StudentsResult = {
    connected: settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    failed: settled.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : [])),
    cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  };
  process.stdout.write(JSON.stringify(result));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
