import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DesktopLink } from './link';

/** The desktop's end as a test drives it: what the server wrote, and a way to send frames as a hostile tenant could. */
function fakeDesktop() {
  const written: Buffer[] = [];
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      written.push(chunk);
      cb();
    },
  });
  let gone = 0;
  let ups = 0;
  const link = new DesktopLink(stream, () => gone++, () => ups++);
  stream.emit('connect');
  const frames = () => {
    const all = Buffer.concat(written);
    const out: { kind: number; ch: number; payload: Buffer }[] = [];
    for (let i = 0; i + 9 <= all.length; ) {
      const n = all.readUInt32BE(i + 5);
      out.push({ kind: all[i]!, ch: all.readUInt32BE(i + 1), payload: all.subarray(i + 9, i + 9 + n) });
      i += 9 + n;
    }
    return out;
  };
  const send = (kind: number, ch: number, payload: Buffer | number = Buffer.alloc(0)) => {
    const body = typeof payload === 'number' ? Buffer.alloc(0) : payload;
    const head = Buffer.alloc(9);
    head.writeUInt8(kind, 0);
    head.writeUInt32BE(ch, 1);
    head.writeUInt32BE(typeof payload === 'number' ? payload : body.length, 5);
    stream.push(Buffer.concat([head, body]));
  };
  return { link, stream, written, frames, send, gone: () => gone, ups: () => ups };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('desktop link (the server end)', () => {
  it('says when the desktop first answers, and again only after it went down', async () => {
    const d = fakeDesktop();
    const health = (said: string) => d.send(6, 0, Buffer.from(said, 'latin1'));
    health('down');
    health('beat');
    await tick();
    expect(d.ups()).toBe(0);
    health('up');
    health('up');
    health('beat');
    await tick();
    expect(d.ups()).toBe(1);
    health('down');
    health('up');
    await tick();
    expect(d.ups()).toBe(2);
  });

  it('opens a channel by socket number, and emits connect when the desktop reached it', async () => {
    const d = fakeDesktop();
    const ch = d.link.open(2, true);
    let connected = false;
    ch.on('connect', () => (connected = true));
    await tick();
    expect(d.frames()[0]).toMatchObject({ kind: 1, ch: 1 });
    expect([...d.frames()[0]!.payload]).toEqual([2, 0x77]);
    d.send(5, 1);
    await tick();
    expect(connected).toBe(true);
  });

  it('gives credit back only as the reader takes the data, and holds its own writes to the window it was given', async () => {
    const d = fakeDesktop();
    const ch = d.link.open(1, false);
    d.send(5, 1);
    ch.pause();
    await tick();
    d.send(2, 1, Buffer.alloc(65536, 1));
    await tick();
    // Paused with more than its highWaterMark buffered: no credit yet.
    expect(d.frames().filter((f) => f.kind === 4)).toHaveLength(0);
    ch.resume();
    await tick();
    const credits = d.frames().filter((f) => f.kind === 4).reduce((n, f) => n + f.payload.readUInt32BE(0), 0);
    expect(credits).toBe(65536);
    // Writes: 300 KiB against a 256 KiB window → 256 KiB of data frames until credit comes.
    let done = false;
    ch.write(Buffer.alloc(300 * 1024, 2), () => (done = true));
    await tick();
    const sent = () => d.frames().filter((f) => f.kind === 2).reduce((n, f) => n + f.payload.length, 0);
    expect(sent()).toBe(256 * 1024);
    expect(done).toBe(false);
    const credit = Buffer.alloc(4);
    credit.writeUInt32BE(64 * 1024, 0);
    d.send(4, 1, credit);
    await tick();
    expect(sent()).toBe(300 * 1024);
    expect(done).toBe(true);
  });

  it('gives credit back in pieces of 64 KiB, not one per frame, and writes the frames of one turn together', async () => {
    const d = fakeDesktop();
    const ch = d.link.open(1, false);
    d.send(5, 1);
    await tick();
    ch.resume();
    for (let i = 0; i < 100; i++) d.send(2, 1, Buffer.alloc(1024, 3));
    await tick();
    const credits = d.frames().filter((f) => f.kind === 4).map((f) => f.payload.readUInt32BE(0));
    expect(credits).toHaveLength(1);
    expect(credits[0]).toBeGreaterThanOrEqual(64 * 1024);
    expect(credits[0]).toBeLessThanOrEqual(100 * 1024);
    const writes = d.written.length;
    for (let i = 0; i < 10; i++) ch.write(Buffer.from(`request ${i}`));
    await tick();
    expect(d.written.length).toBe(writes + 1);
    expect(d.frames().filter((f) => f.kind === 2)).toHaveLength(10);
  });

  it.each([
    ['a frame longer than 64 KiB', (d: ReturnType<typeof fakeDesktop>) => d.send(2, 1, 16 * 1024 * 1024)],
    ['a frame of an unknown kind', (d: ReturnType<typeof fakeDesktop>) => d.send(9, 1)],
    ['a kind only the server sends', (d: ReturnType<typeof fakeDesktop>) => d.send(1, 1, Buffer.from([1]))],
    [
      'more data than the window it was given',
      (d: ReturnType<typeof fakeDesktop>) => {
        for (let i = 0; i < 5; i++) d.send(2, 1, Buffer.alloc(65536));
      },
    ],
  ])('ends the link and its channels on %s from the desktop', async (_what, attack) => {
    const d = fakeDesktop();
    const ch = d.link.open(1, false);
    ch.on('error', () => {});
    ch.pause();
    d.send(5, 1);
    await tick();
    attack(d);
    await tick();
    await tick();
    expect(d.stream.destroyed).toBe(true);
    expect(ch.destroyed).toBe(true);
    expect(d.gone()).toBe(1);
  });

  it("ignores frames for channels it already closed (they cross the close), and tells the desktop a closed channel's end", async () => {
    const d = fakeDesktop();
    const ch = d.link.open(1, false);
    d.send(5, 1);
    await tick();
    ch.destroy();
    await tick();
    expect(d.frames().at(-1)).toMatchObject({ kind: 3, ch: 1 });
    d.send(2, 1, Buffer.from('late'));
    d.send(2, 77, Buffer.from('never opened'));
    await tick();
    expect(d.stream.destroyed).toBe(false);
  });

  it('a channel ended by its user tells the desktop and closes; one the desktop closes fails a write still waiting for credit', async () => {
    const d = fakeDesktop();
    const a = d.link.open(1, false);
    d.send(5, 1);
    await tick();
    let closed = false;
    a.on('close', () => (closed = true));
    a.resume(); // read to its end, as the gateway's pipe does
    a.end();
    await tick();
    await tick();
    expect(d.frames().at(-1)).toMatchObject({ kind: 3, ch: 1 });
    expect(closed).toBe(true);

    const b = d.link.open(1, false);
    d.send(5, 2);
    await tick();
    let failed: Error | null | undefined;
    b.on('error', () => {});
    b.write(Buffer.alloc(300 * 1024), (err) => (failed = err));
    await tick();
    d.send(3, 2);
    await tick();
    await tick();
    expect(failed).toBeInstanceOf(Error);
    expect(b.destroyed).toBe(true);
  });

  it("reads the desktop's health: up, down, and beats that keep it alive without changing it", async () => {
    const d = fakeDesktop();
    d.send(6, 0, Buffer.from('up'));
    await tick();
    const up = d.link.upAt;
    expect(up).toBeGreaterThan(0);
    d.send(6, 0, Buffer.from('beat'));
    await tick();
    expect(d.link.upAt).toBe(up);
    d.send(6, 0, Buffer.from('down'));
    await tick();
    expect(d.link.upAt).toBe(0);
  });
});
