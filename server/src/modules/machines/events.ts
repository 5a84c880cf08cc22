import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Database, Queryable } from '../../db/client';
import { courses, machines } from '../../db/schema/index';
import { rosterUserIds } from '../courses/seats';

/** What the server pushes: `balance` tells a dashboard to re-fetch GET /v1/user/wallet/balance. */
export interface ServerEvent {
  type: 'balance';
}

/**
 * Publish/subscribe keyed by user id (ctx.events). GET /v1/user/events streams it to browsers and the desktop
 * gateway re-checks access on it. On PostgreSQL every event also goes through NOTIFY on one channel, and each
 * server LISTENs on one dedicated connection, so a dashboard connected to any replica hears what any replica
 * (the reconciler's leader, an API call, the idle job) published. On the embedded database it stays in process.
 */
export interface Events {
  publish(userIds: string[], event: ServerEvent): void;
  subscribe(userId: string, fn: (event: ServerEvent) => void): () => void;
  /** Open subscriptions (for tests and metrics). */
  subscribers(): number;
  /** Wakes a server-side loop on every server (here and, on PostgreSQL, on the others): `reconcile`. */
  signal(name: Signal): void;
  onSignal(name: Signal, fn: () => void): void;
  close(): Promise<void>;
}

/** Server-side wake-ups: `reconcile` asks the reconciler's leader, wherever it runs, for a pass now. */
export type Signal = 'reconcile';
const SIGNALS = new Set<string>(['reconcile']);

export const EVENTS_CHANNEL = 'hyperdesk_events';
/** NOTIFY payloads stay under PostgreSQL's 8000-byte cap: user ids go out in chunks (a uuid is 38 bytes in JSON). */
const IDS_PER_NOTICE = 150;
const EVENT_TYPES = new Set<ServerEvent['type']>(['balance']);

interface Notice {
  o: string;
  e: ServerEvent['type'] | Signal;
  u: string[];
}

export interface EventsDeps {
  /** The PostgreSQL database (absent or PGlite: in-process only). */
  database?: Pick<Database, 'kind' | 'listen' | 'rows'>;
  log?: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
}

export function createEvents(deps: EventsDeps = {}): Events {
  const byUser = new Map<string, Set<(e: ServerEvent) => void>>();
  const bySignal = new Map<Signal, (() => void)[]>();
  const raise = (name: Signal) => {
    for (const fn of bySignal.get(name) ?? []) {
      try {
        fn();
      } catch {
        /* a wake-up never throws into the bus */
      }
    }
  };
  const origin = randomUUID();
  const log = deps.log ?? { warn: () => undefined, info: () => undefined };

  const deliver = (userIds: Iterable<string>, event: ServerEvent) => {
    for (const uid of new Set(userIds)) {
      for (const fn of byUser.get(uid) ?? []) {
        try {
          fn(event);
        } catch {
          /* one broken subscriber never stops the others */
        }
      }
    }
  };

  const onMessage = (payload: string) => {
    let n: Notice;
    try {
      n = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (!n || n.o === origin || !Array.isArray(n.u)) return;
    if (SIGNALS.has(n.e)) return raise(n.e as Signal);
    if (!EVENT_TYPES.has(n.e as ServerEvent['type'])) return;
    deliver(n.u.filter((u) => typeof u === 'string'), { type: n.e as ServerEvent['type'] });
  };

  const database = deps.database?.kind === 'postgres' ? deps.database : undefined;
  const listener = database?.listen?.({
    channel: EVENTS_CHANNEL,
    onMessage,
    // Whatever was published while the connection was down is lost: every dashboard here re-fetches once.
    onConnect: (reconnected) => reconnected && deliver(byUser.keys(), { type: 'balance' }),
    log,
  });

  const send = (notice: Notice) => database!.rows(sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(notice)})`);
  const notify = async (ids: string[], event: ServerEvent) => {
    for (let i = 0; i < ids.length; i += IDS_PER_NOTICE) await send({ o: origin, e: event.type, u: ids.slice(i, i + IDS_PER_NOTICE) });
  };

  return {
    publish(userIds, event) {
      const ids = [...new Set(userIds)];
      deliver(ids, event);
      if (database && ids.length) notify(ids, event).catch((err) => log.warn({ err }, 'could not publish an event to other servers'));
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
    signal(name) {
      raise(name);
      if (database) send({ o: origin, e: name, u: [] }).catch((err) => log.warn({ err }, 'could not signal other servers'));
    },
    onSignal(name, fn) {
      bySignal.set(name, [...(bySignal.get(name) ?? []), fn]);
    },
    close: async () => listener?.close(),
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

/** Who watches a course machine's seat (the seat table on the instructor's dashboard): the course's owner. */
export async function seatWatchersOf(q: Queryable, courseId: string): Promise<string[]> {
  const [row] = await q.select({ owner: courses.ownerUserId }).from(courses).where(eq(courses.id, courseId)).limit(1);
  return row ? [row.owner] : [];
}
