import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { courses, machines } from '../../db/schema/index';
import { rosterUserIds } from '../courses/seats';

/** What the server pushes: `balance` tells a dashboard to re-fetch GET /v1/user/wallet/balance. */
export interface ServerEvent {
  type: 'balance';
}

/**
 * In-process publish/subscribe keyed by user id (ctx.events). GET /v1/user/events streams it to browsers.
 * It reaches the subscribers of this server process: with several servers, a dashboard connected to another
 * server than the reconciler's leader falls back to its polling (spec §4), which stays in place for that reason.
 */
export interface Events {
  publish(userIds: string[], event: ServerEvent): void;
  subscribe(userId: string, fn: (event: ServerEvent) => void): () => void;
  /** Open subscriptions (for tests and metrics). */
  subscribers(): number;
}

export function createEvents(): Events {
  const byUser = new Map<string, Set<(e: ServerEvent) => void>>();
  return {
    publish(userIds, event) {
      for (const uid of new Set(userIds)) {
        for (const fn of byUser.get(uid) ?? []) {
          try {
            fn(event);
          } catch {
            /* one broken subscriber never stops the others */
          }
        }
      }
    },
    subscribe(userId, fn) {
      const set = byUser.get(userId) ?? new Set();
      set.add(fn);
      byUser.set(userId, set);
      return () => {
        set.delete(fn);
        if (set.size === 0 && byUser.get(userId) === set) byUser.delete(userId);
      };
    },
    subscribers: () => [...byUser.values()].reduce((n, s) => n + s.size, 0),
  };
}

/**
 * Who sees a machine on their dashboard and must hear about its state: the owner of a single machine, the
 * instructor (course owner) of a course machine. The classroom work adds the course's students here.
 */
export async function audienceOf(q: Queryable, machineId: string): Promise<string[]> {
  const [row] = await q
    .select({ owner: machines.ownerUserId, courseOwner: courses.ownerUserId, courseId: machines.courseId })
    .from(machines)
    .leftJoin(courses, eq(courses.id, machines.courseId))
    .where(eq(machines.id, machineId))
    .limit(1);
  if (!row) return [];
  const students = row.courseId ? await rosterUserIds(q, row.courseId) : [];
  return [row.owner, row.courseOwner, ...students].filter((u): u is string => !!u);
}
