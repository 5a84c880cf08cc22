import { PassThrough } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { WALL_FRAME, type WallSeat, type WallStreamNote } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { CaptureHub, FrameKind } from './hub';
import { endTakeover, ownCourse, touchTakeover, wallSeats } from './repo';

/** The wall's thumbnails never exceed this (bytes a second, 1.8 Mbit/s): a wall of 40 fits a 2 Mbit/s link. */
export const THUMB_BYTES_PER_SECOND = 225_000;
const BURST_BYTES = 64_000;
const PUMP_MS = 100;
const REFRESH_MS = 3_000;

export interface WallStreamDeps {
  db: Db;
  clock: Clock;
  hub: CaptureHub;
  log: FastifyBaseLogger;
}

/** One frame of the stream: u32 length of what follows, u8 kind, payload (see WALL_FRAME in the contract). */
function frame(kind: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length + 1, 0);
  head[4] = kind;
  return Buffer.concat([head, payload]);
}
const pictureFrame = (kind: FrameKind, machineId: string, jpeg: Buffer) =>
  frame(kind === 'thumb' ? WALL_FRAME.thumb : WALL_FRAME.watch, Buffer.concat([Buffer.from(machineId, 'latin1'), jpeg]));
const noteFrame = (note: WallStreamNote) => frame(WALL_FRAME.note, Buffer.from(JSON.stringify(note)));

/** What the wall page shows of a seat; a change makes the stream say 'seats-changed' (the page reads the list again). */
const signature = (seats: WallSeat[]) =>
  JSON.stringify(seats.map((s) => [s.machineId, s.online, s.student?.userId ?? null, s.handRaisedAt, s.takenOver]));

/**
 * The instructor's stream for one course: every online machine's thumbnail (or, with `watch`, that one desktop's
 * larger pictures only), paced by a byte budget so pictures wait rather than pile up; notes when the seats change.
 * While it watches a machine it keeps the instructor's take-over of it alive, and ends it when it closes.
 */
export function openWallStream(deps: WallStreamDeps, a: { courseId: string; userId: string; watch: string | null }): PassThrough {
  const out = new PassThrough({ highWaterMark: 128 * 1024 });
  const subs = new Map<string, () => void>();
  const pending = new Map<string, Buffer>();
  let tokens = BURST_BYTES;
  let filled = performance.now();
  let congested = false;
  let closed = false;
  let lastSignature = '';
  let pump: NodeJS.Timeout | null = null;

  const write = (buf: Buffer): void => {
    if (closed || congested) return;
    if (!out.write(buf)) {
      congested = true; // a slow link: pictures are dropped (newer ones follow) until it drains
      out.once('drain', () => {
        congested = false;
      });
    }
  };

  function sendPending(): void {
    pump = null;
    const now = performance.now();
    tokens = Math.min(BURST_BYTES, tokens + ((now - filled) / 1000) * THUMB_BYTES_PER_SECOND);
    filled = now;
    for (const [machineId, jpeg] of pending) {
      if (tokens < jpeg.length || congested) break;
      pending.delete(machineId);
      tokens -= jpeg.length;
      write(pictureFrame('thumb', machineId, jpeg));
    }
    if (pending.size && !closed) pump = setTimeout(sendPending, PUMP_MS);
  }

  const kind: FrameKind = a.watch ? 'watch' : 'thumb';
  const onPicture = (machineId: string) => (jpeg: Buffer) => {
    if (kind === 'watch') return write(pictureFrame('watch', machineId, jpeg));
    pending.set(machineId, jpeg); // a seat already waiting keeps its place in the queue with its newest picture
    if (!pump) sendPending();
  };

  async function refresh(): Promise<void> {
    if (closed) return;
    if (!(await ownCourse(deps.db, a.userId, a.courseId))) return void out.end();
    const seats = await wallSeats(deps.db, a.courseId, deps.clock.now());
    const sig = signature(seats);
    if (sig !== lastSignature) {
      if (lastSignature) write(noteFrame({ t: 'seats-changed' }));
      lastSignature = sig;
    }
    const online = new Set(seats.filter((s) => s.online).map((s) => s.machineId));
    const wanted = a.watch ? new Set(online.has(a.watch) ? [a.watch] : []) : online;
    if (a.watch && !online.has(a.watch)) write(noteFrame({ t: 'watch-ended', machineId: a.watch }));
    if (a.watch) await touchTakeover(deps.db, a.watch, a.userId, deps.clock.now());
    if (closed) return;
    for (const [id, unsubscribe] of subs) {
      if (wanted.has(id)) continue;
      unsubscribe();
      subs.delete(id);
      pending.delete(id);
    }
    for (const id of wanted) if (!subs.has(id)) subs.set(id, deps.hub.subscribe(id, kind, onPicture(id)));
  }

  let refreshing = false;
  const tick = () => {
    if (refreshing) return;
    refreshing = true;
    refresh()
      .catch((err) => deps.log.warn({ err }, 'wall stream refresh failed'))
      .finally(() => {
        refreshing = false;
      });
  };
  write(noteFrame({ t: 'open' }));
  const timer = setInterval(tick, REFRESH_MS);
  tick();

  out.on('close', () => {
    closed = true;
    clearInterval(timer);
    if (pump) clearTimeout(pump);
    for (const unsubscribe of subs.values()) unsubscribe();
    subs.clear();
    if (a.watch) endTakeover(deps.db, a.watch, a.userId, deps.clock.now()).catch((err) => deps.log.warn({ err }, 'could not end a take-over'));
  });
  return out;
}
