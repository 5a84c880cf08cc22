/**
 * Pictures from a desktop, trusted for nothing: the capture runs inside the tenant's instance as the tenant's own
 * user, so whoever has a shell there can write any bytes in its place. Only a JPEG image leaves the server: the
 * multipart framing is parsed with hard limits, and each picture is rebuilt from its image segments alone
 * (quantisation and Huffman tables, frame header, restart interval, scans, and Adobe's colour-transform flag), so
 * comments, EXIF/XMP, ICC profiles and trailing bytes never reach the instructor. Sizes are checked against the
 * capture's own limits.
 */

export const MAX_JPEG_BYTES = 512 * 1024;
const MAX_HEADER_BYTES = 256;
const HEADER_END = Buffer.from('\r\n\r\n');

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
/** Segments an image needs: DQT, DHT, DRI, baseline/extended/progressive Huffman frame headers. */
const KEEP = new Set([0xdb, 0xc4, 0xdd, 0xc0, 0xc1, 0xc2]);
const FRAME = new Set([0xc0, 0xc1, 0xc2]);
const APP14 = 0xee;
const isRestart = (m: number) => m >= 0xd0 && m <= 0xd7;
const isSkippable = (m: number) => (m >= 0xe0 && m <= 0xef) || m === 0xfe; // APPn, COM

/** The JPEG rebuilt from its image segments, or null when it is not a plausible JPEG within the size limits. */
export function sanitizeJpeg(src: Buffer, maxWidth: number, maxHeight: number): Buffer | null {
  if (src.length < 4 || src.length > MAX_JPEG_BYTES || src[0] !== 0xff || src[1] !== SOI) return null;
  const out: Buffer[] = [Buffer.from([0xff, SOI])];
  let sawFrame = false;
  let sawScan = false;
  let i = 2;
  while (i + 2 <= src.length) {
    if (src[i] !== 0xff) return null;
    const marker = src[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === EOI) {
      if (!sawFrame || !sawScan) return null;
      out.push(Buffer.from([0xff, EOI]));
      return Buffer.concat(out);
    }
    if (i + 4 > src.length) return null;
    const len = src.readUInt16BE(i + 2);
    if (len < 2 || i + 2 + len > src.length) return null;
    const segment = src.subarray(i, i + 2 + len);
    if (FRAME.has(marker)) {
      if (len < 8) return null;
      const height = src.readUInt16BE(i + 5);
      const width = src.readUInt16BE(i + 7);
      if (!width || !height || width > maxWidth || height > maxHeight || sawFrame) return null;
      sawFrame = true;
      out.push(segment);
    } else if (marker === APP14) {
      // Adobe's 12-byte block only says how the colours were transformed; nothing free-form is kept.
      if (len === 14 && segment.subarray(4, 9).toString('latin1') === 'Adobe') out.push(segment);
    } else if (KEEP.has(marker)) out.push(segment);
    else if (marker === SOS) {
      if (!sawFrame) return null;
      const end = scanEnd(src, i + 2 + len);
      if (end < 0) return null;
      out.push(src.subarray(i, end));
      sawScan = true;
      i = end;
      continue;
    } else if (!isSkippable(marker)) return null;
    i += 2 + len;
  }
  return null;
}

/** Where the entropy-coded data after a scan header ends: the first marker that is not a stuffed byte or a restart. */
function scanEnd(src: Buffer, from: number): number {
  let i = from;
  for (;;) {
    i = src.indexOf(0xff, i);
    if (i < 0 || i + 1 >= src.length) return -1;
    const next = src[i + 1]!;
    if (next === 0x00 || isRestart(next) || next === 0xff) {
      i += next === 0xff ? 1 : 2;
      continue;
    }
    return i;
  }
}

/**
 * Splits GStreamer's multipartmux output ("--b\r\nContent-Type: image/jpeg\r\nContent-Length: N\r\n\r\n<N bytes>\r\n")
 * into its parts. Any deviation (a header too long, no length, a part too big) is an error: the capture is ended.
 */
export class MultipartReader {
  private buf: Buffer = Buffer.alloc(0);
  private want = -1;

  /** Feeds bytes; answers the complete parts, or throws on a malformed stream. */
  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const parts: Buffer[] = [];
    for (;;) {
      if (this.want < 0) {
        const end = this.buf.indexOf(HEADER_END);
        if (end < 0) {
          if (this.buf.length > MAX_HEADER_BYTES) throw new Error('capture header too long');
          return parts;
        }
        if (end > MAX_HEADER_BYTES) throw new Error('capture header too long');
        const header = this.buf.subarray(0, end).toString('latin1');
        const m = /(?:^|\r\n)Content-Length: (\d{1,7})(?:\r\n|$)/i.exec(header);
        if (!m || !header.replace(/^\r\n/, '').startsWith('--')) throw new Error('capture header malformed');
        this.want = Number(m[1]);
        if (this.want > MAX_JPEG_BYTES) throw new Error('capture picture too big');
        this.buf = this.buf.subarray(end + HEADER_END.length);
      }
      if (this.buf.length < this.want) return parts;
      parts.push(Buffer.from(this.buf.subarray(0, this.want)));
      this.buf = this.buf.subarray(this.want);
      this.want = -1;
    }
  }
}
