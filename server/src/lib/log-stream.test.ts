import { describe, expect, it } from 'vitest';
import { PassThrough, Writable } from 'node:stream';
import { createLogStream } from './log-stream';

const line = (i: number) => `${JSON.stringify({ level: 30, msg: `line ${i}` })}\n`;

describe('createLogStream', () => {
  it('drops lines while the reader is stuck and reports how many once it catches up', async () => {
    const out = new PassThrough({ highWaterMark: 64 });
    const log = createLogStream(out, 1_000);
    for (let i = 0; i < 200; i++) log.write(line(i));
    expect(out.writableLength).toBeLessThanOrEqual(1_000 + line(199).length);
    expect(log.dropped).toBeGreaterThan(150);

    const read: string[] = [];
    out.on('data', (d: Buffer) => read.push(String(d)));
    await new Promise((r) => out.once('drain', r));
    await new Promise((r) => setImmediate(r));
    const lines = read.join('').trim().split('\n').map((l) => JSON.parse(l) as { msg: string; level: number });
    expect(lines[0]).toMatchObject({ msg: 'line 0' });
    expect(lines.at(-1)).toMatchObject({ level: 40, msg: `${log.dropped} log lines dropped: the log reader was not keeping up` });
    expect(lines).toHaveLength(200 - log.dropped + 1);
  });

  it('drops everything after a write error (the reader closed the pipe) instead of throwing', async () => {
    const out = new Writable({ write: (_chunk, _enc, cb) => cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
    const log = createLogStream(out);
    log.write(line(1));
    await new Promise((r) => setImmediate(r));
    expect(() => log.write(line(2))).not.toThrow();
    expect(log.dropped).toBe(1);
  });
});
