import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tileColours, ZrleStream } from './zrle';

const px = (v: number) => Buffer.from([v >> 16, (v >> 8) & 255, v & 255]);

describe('ZRLE tile colours', () => {
  it('reads solid, raw, packed palette, plain RLE and palette RLE tiles across a 2×2-tile rectangle', () => {
    const w = 70; // tiles of 64 and 6 pixels across, 64 and 2 rows down
    const h = 66;
    const solid = Buffer.concat([Buffer.from([1]), px(0x000001)]);
    const raw = Buffer.concat([Buffer.from([0]), ...Array.from({ length: 6 * 64 }, (_, i) => px(i % 3 === 0 ? 0x000002 : 0x000003))]);
    // 2-colour palette, 1 bit per pixel, rows of 64 pixels = 8 bytes, 2 rows.
    const packed = Buffer.concat([Buffer.from([2]), px(0x000004), px(0x000005), Buffer.alloc(16, 0xaa)]);
    // Plain RLE over 6×2 = 12 pixels: 10 of one colour (run byte 9), then 2 (run byte 1).
    const plain = Buffer.concat([Buffer.from([128]), px(0x000006), Buffer.from([9]), px(0x000007), Buffer.from([1])]);
    const data = Buffer.concat([solid, raw, packed, plain]);
    const { colours, length } = tileColours(data, w, h);
    expect(length).toBe(data.length);
    expect([...colours].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // With enough colours asked for, it stops at the tile that brings them (the raw one, the second).
    const some = tileColours(data, w, h, 2);
    expect(some.length).toBe(solid.length + raw.length);
    expect([...some.colours].sort((a, b) => a - b)).toEqual([1, 2, 3]);

    // Palette RLE over one 64×64 tile: index 0 for 4000 pixels (run 255+255+...), index 1 once, then 95 single 0s.
    const runs: number[] = [];
    for (let n = 4000 - 1; ; n -= 255) {
      runs.push(Math.min(n, 255));
      if (n < 255) break;
      if (n === 255) {
        runs.push(0);
        break;
      }
    }
    const paletteRle = Buffer.concat([Buffer.from([130]), px(0x0000aa), px(0x0000bb), Buffer.from([0x80, ...runs, 1]), Buffer.alloc(95, 0)]);
    const r = tileColours(paletteRle, 64, 64);
    expect(r.length).toBe(paletteRle.length);
    expect([...r.colours]).toEqual([0xaa, 0xbb]);
  });

  it('inflates the rectangles of a connection as one zlib stream', () => {
    const deflate = zlib.createDeflate();
    const chunks: Buffer[] = [];
    deflate.on('data', (c: Buffer) => chunks.push(c));
    const flushed = (b: Buffer) =>
      new Promise<Buffer>((resolve) => {
        const before = chunks.length;
        deflate.write(b);
        deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => resolve(Buffer.concat(chunks.splice(before))));
      });
    return (async () => {
      const a = await flushed(Buffer.concat([Buffer.from([1]), px(0x111111)]));
      const b = await flushed(Buffer.concat([Buffer.from([1]), px(0x222222)]));
      const z = new ZrleStream();
      expect([...(await z.rect(a, 64, 64))]).toEqual([0x111111]);
      expect([...(await z.rect(b, 64, 64))]).toEqual([0x222222]);
      z.close();
    })();
  });

  it('refuses an undefined subencoding and data cut short', () => {
    expect(() => tileColours(Buffer.from([17]), 8, 8)).toThrow(/not defined/);
    expect(() => tileColours(Buffer.from([0, 1, 2]), 8, 8)).toThrow(/cut short|out of range/i);
  });
});
