import { queryOptions } from '@tanstack/react-query';
import { MyWallAnswer, WALL_FRAME, WallAnswer, WallStreamNote, type WallInputEvent } from '@hyperdesk/contract';
import { openStream, request } from './http';

/** The instructor wall (issue 22.2): the course's seats, hands and take-overs. */
export const wallKey = (courseId: string) => ['wall', courseId] as const;
export const wallQuery = (courseId: string) =>
  queryOptions({
    queryKey: wallKey(courseId),
    queryFn: () => request('GET', `/v1/wall/course/${encodeURIComponent(courseId)}`, { schema: WallAnswer }),
    refetchInterval: 10_000,
  });

/** The student's own hand and whether the instructor controls their desktop (read every 2 s on the connect tab). */
export const myWallKey = (packId: string) => ['wall', 'mine', packId] as const;
export const myWallQuery = (packId: string) =>
  queryOptions({
    queryKey: myWallKey(packId),
    queryFn: () => request('GET', `/v1/wall/mine?packId=${encodeURIComponent(packId)}`, { schema: MyWallAnswer }),
    refetchInterval: 2_000,
    retry: false,
  });

export const setHand = (packId: string, raised: boolean) => request('POST', '/v1/wall/hand', { body: { packId, raised }, schema: MyWallAnswer });
export const lowerHand = (courseId: string, userId: string) => request('POST', `/v1/wall/course/${encodeURIComponent(courseId)}/lower-hand`, { body: { userId } });
export const setTakeover = (machineId: string, on: boolean) => request('POST', '/v1/wall/takeover', { body: { machineId, on } });
export const sendInput = (machineId: string, events: WallInputEvent[]) => request('POST', '/v1/wall/input', { body: { machineId, events } });

export interface WallPicture {
  kind: 'thumb' | 'watch';
  machineId: string;
  jpeg: Blob;
}

/**
 * Reads the wall's picture stream until `signal` aborts it: each picture and note is handed over as it arrives.
 * Frames: u32 length, u8 kind, payload (contract WALL_FRAME).
 */
export async function readWallStream(
  courseId: string,
  watch: string | null,
  signal: AbortSignal,
  on: { picture(p: WallPicture): void; note(n: WallStreamNote): void },
): Promise<void> {
  const path = `/v1/wall/course/${encodeURIComponent(courseId)}/stream${watch ? `?watch=${encodeURIComponent(watch)}` : ''}`;
  const reader = (await openStream(path, signal)).getReader();
  let buf = new Uint8Array(0);
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const joined = new Uint8Array(buf.length + value.length);
    joined.set(buf);
    joined.set(value, buf.length);
    buf = joined;
    let at = 0;
    while (buf.length - at >= 5) {
      const view = new DataView(buf.buffer, buf.byteOffset + at);
      const len = view.getUint32(0);
      if (buf.length - at < 4 + len) break;
      const kind = buf[at + 4];
      const payload = buf.subarray(at + 5, at + 4 + len);
      if (kind === WALL_FRAME.note) {
        const parsed = WallStreamNote.safeParse(JSON.parse(decoder.decode(payload)));
        if (parsed.success) on.note(parsed.data);
      } else if (kind === WALL_FRAME.thumb || kind === WALL_FRAME.watch) {
        const machineId = decoder.decode(payload.subarray(0, 36));
        on.picture({ kind: kind === WALL_FRAME.thumb ? 'thumb' : 'watch', machineId, jpeg: new Blob([payload.slice(36)], { type: 'image/jpeg' }) });
      }
      at += 4 + len;
    }
    buf = buf.slice(at);
  }
}
