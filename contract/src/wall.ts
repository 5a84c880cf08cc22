import { z } from 'zod';

/**
 * Instructor wall (issue 22.2): GET /v1/wall/:courseId lists the course's machines with who sits there and raised
 * hands; GET /v1/wall/:courseId/stream streams thumbnails (and the watched desktop) as binary frames; take-over
 * lends the instructor the keyboard and mouse of one desktop. The course's instructor only (others 404).
 */
const Id = z.string().uuid();

export const WallSeat = z.object({
  machineId: Id,
  /** The machine's name in the course (e.g. "Lab 3"). */
  machineName: z.string(),
  /** Running and reachable: its thumbnail is streamed. */
  online: z.boolean(),
  /** The student sitting there now, or null for a free seat. */
  student: z.object({ userId: Id, name: z.string(), email: z.string() }).nullable(),
  /** When the seated student raised their hand (ISO), or null. */
  handRaisedAt: z.string().nullable(),
  /** The instructor controls this desktop now. */
  takenOver: z.boolean(),
});
export type WallSeat = z.infer<typeof WallSeat>;

export const WallAnswer = z.object({
  courseId: Id,
  courseName: z.string(),
  seats: z.array(WallSeat),
  /** Raised hands of students not sitting at a machine now (they still want help). */
  handsAway: z.array(z.object({ userId: Id, name: z.string(), raisedAt: z.string() })),
});
export type WallAnswer = z.infer<typeof WallAnswer>;

/** The student's hand: `packId` is the STUDENT entry's packId (the course). */
export const HandBody = z.object({ packId: Id, raised: z.boolean() });
export type HandBody = z.infer<typeof HandBody>;

/** The instructor lowers a student's hand. */
export const LowerHandBody = z.object({ userId: Id });

/** What the student's connect tab shows: their hand, and whether the instructor controls their desktop. */
export const MyWallAnswer = z.object({
  hand: z.boolean(),
  takeover: z.object({ by: z.string(), since: z.string() }).nullable(),
  /** The last take-over of this student's desktop that ended (ISO), so the tab can say it ended. */
  lastEndedAt: z.string().nullable(),
});
export type MyWallAnswer = z.infer<typeof MyWallAnswer>;

export const TakeoverBody = z.object({ machineId: Id, on: z.boolean() });
export type TakeoverBody = z.infer<typeof TakeoverBody>;

/** Keyboard (X keysym) and pointer (0..1 of the picture, RFB button mask) input of a take-over, in order. */
export const WallInputEvent = z.discriminatedUnion('t', [
  z.object({ t: z.literal('k'), down: z.boolean(), keysym: z.number().int().min(0).max(0x1fffffff) }),
  z.object({ t: z.literal('p'), x: z.number().min(0).max(1), y: z.number().min(0).max(1), buttons: z.number().int().min(0).max(255) }),
]);
export type WallInputEvent = z.infer<typeof WallInputEvent>;
export const WallInputBody = z.object({ machineId: Id, events: z.array(WallInputEvent).min(1).max(200) });
export type WallInputBody = z.infer<typeof WallInputBody>;

/**
 * The stream's frames: u32 big-endian length of what follows, u8 kind, then the payload. Kind 1 (thumbnail) and
 * 2 (watched desktop): 36 ASCII bytes of the machine id, then a JPEG; kind 0: a JSON `WallStreamNote` (the first
 * frame is always `open`, so the answer starts at once).
 */
export const WALL_FRAME = { note: 0, thumb: 1, watch: 2 } as const;
export const WallStreamNote = z.object({ t: z.enum(['open', 'seats-changed', 'watch-ended']), machineId: Id.optional() });
export type WallStreamNote = z.infer<typeof WallStreamNote>;
