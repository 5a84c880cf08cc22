/**
 * What a course entry shows of its machines (the least time left, the course state, each machine's name and state),
 * kept between balance reads by course and machine version (migration 0740: every change that shows here takes a
 * new version in the same statement). The balance statement reads each course's newest version on every read and
 * builds this part again only for a course whose version the reader does not hold, so the read is as fresh as the
 * database whichever replica answers, and an instructor's read costs about what a single user's does whatever the
 * machines per course. Who sits where is not kept here (it changes every few seconds): read on every read.
 */
import type { InstanceStatus } from '@hyperdesk/contract';

export interface MachinesPart {
  /** The least minutes left on any machine of the course (0 without machines). */
  leftMinutes: number;
  /** The least minutes granted (bought plus added) to any machine's live lots: never below leftMinutes. */
  grantedMinutes: number;
  /** online if any machine is, else processing if any is, else offline. */
  status: InstanceStatus;
  /** Earliest start of a machine in `processing`. */
  processingSince: Date | null;
  /** The first stop reason in seat order. */
  stopReason: string | null;
  /** When the first lot with minutes left expires: the part is no longer true from then on. */
  nextExpiry: Date | null;
  /** By seat number. */
  machines: { seq: number; name: string; observed: InstanceStatus; id: string }[];
}

interface Kept {
  version: string;
  part: MachinesPart;
}

/** A version the statement can name: `<courseId>:<version>`. */
export const partKey = (courseId: string, version: string) => `${courseId}:${version}`;

/**
 * The kept parts (at most `limit` courses, the least recently used go first) and, per user, the courses of their
 * last read — the ones whose keys their next read sends.
 */
export function createMachinesParts(limit = 10_000) {
  const parts = new Map<string, Kept>();
  const coursesOf = new Map<string, string[]>();
  const touch = <K, V>(map: Map<K, V>, key: K, value: V) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > limit) map.delete(map.keys().next().value as K);
  };
  return {
    /** The parts this user's read may reuse (still true at `at`), by course id. */
    heldFor(userId: string, at: Date): Map<string, Kept> {
      const held = new Map<string, Kept>();
      for (const id of coursesOf.get(userId) ?? []) {
        const kept = parts.get(id);
        if (kept && (!kept.part.nextExpiry || kept.part.nextExpiry > at)) held.set(id, kept);
      }
      return held;
    },
    keep(courseId: string, version: string, part: MachinesPart): void {
      touch(parts, courseId, { version, part });
    },
    /** The courses of the user's last read. */
    read(userId: string, courseIds: string[]): void {
      touch(coursesOf, userId, courseIds);
    },
  };
}

export type MachinesParts = ReturnType<typeof createMachinesParts>;
