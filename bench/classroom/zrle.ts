/**
 * Enough of RFB's ZRLE encoding (RFC 6143 §7.7.6) to tell a drawn desktop from an empty screen: the colours of a
 * framebuffer update's tiles, 3-byte CPIXELs (32 bpp true colour, depth 24). One zlib stream runs across every ZRLE
 * rectangle of a connection.
 */
import zlib from 'node:zlib';

const TILE = 64;
const CPIXEL = 3;

/** A connection's ZRLE data: each rectangle's compressed bytes in order, through one zlib stream. */
export class ZrleStream {
  private readonly inflate = zlib.createInflate();
  private out: Buffer[] = [];

  constructor() {
    this.inflate.on('data', (c: Buffer) => this.out.push(c));
  }

  /**
   * Adds one rectangle's compressed bytes (each ends with a sync flush); answers its tiles' colours (w × h pixels),
   * read until there are `enough` of them (the whole rectangle is inflated all the same: the stream goes on).
   */
  async rect(data: Buffer, w: number, h: number, enough = Infinity): Promise<Set<number>> {
    await new Promise<void>((resolve, reject) => {
      this.inflate.once('error', reject);
      this.inflate.write(data);
      this.inflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        this.inflate.off('error', reject);
        resolve();
      });
    });
    return tileColours(Buffer.concat(this.out.splice(0)), w, h, enough).colours;
  }

  close(): void {
    this.inflate.destroy();
  }
}

/**
 * The colours of a rectangle's tiles in uncompressed ZRLE data; answers them and how many bytes the tiles took. With
 * `enough`, it stops at the first tile that brings the count there (`length` is then where it stopped): a bench
 * client needs to know that the desktop is drawn, not every pixel of it.
 */
export function tileColours(data: Buffer, w: number, h: number, enough = Infinity): { colours: Set<number>; length: number } {
  const colours = new Set<number>();
  let at = 0;
  const pixel = () => {
    if (at + CPIXEL > data.length) throw new Error('ZRLE: tile data cut short');
    const v = (data[at]! << 16) | (data[at + 1]! << 8) | data[at + 2]!;
    at += CPIXEL;
    return v;
  };
  const runLength = () => {
    let n = 1;
    for (;;) {
      const b = data[at++]!;
      n += b;
      if (b !== 255) return n;
    }
  };
  for (let y = 0; y < h; y += TILE) {
    for (let x = 0; x < w; x += TILE) {
      const count = Math.min(TILE, w - x) * Math.min(TILE, h - y);
      const rowPixels = Math.min(TILE, w - x);
      const rows = Math.min(TILE, h - y);
      const sub = data[at++]!;
      if (sub === 0) for (let i = 0; i < count; i++) colours.add(pixel());
      else if (sub === 1) colours.add(pixel());
      else if (sub <= 16) {
        for (let i = 0; i < sub; i++) colours.add(pixel());
        const bits = sub === 2 ? 1 : sub <= 4 ? 2 : 4;
        at += Math.ceil((rowPixels * bits) / 8) * rows;
      } else if (sub === 128) {
        for (let covered = 0; covered < count; ) {
          colours.add(pixel());
          covered += runLength();
        }
      } else if (sub >= 130) {
        const size = sub - 128;
        for (let i = 0; i < size; i++) colours.add(pixel());
        for (let covered = 0; covered < count; ) {
          const index = data[at++]!;
          covered += index & 128 ? runLength() : 1;
        }
      } else throw new Error(`ZRLE: tile subencoding ${sub} is not defined`);
      if (at > data.length) throw new Error('ZRLE: tile data cut short');
      if (colours.size >= enough) return { colours, length: at };
    }
  }
  return { colours, length: at };
}
