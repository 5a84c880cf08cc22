import { and, asc, eq, isNull } from 'drizzle-orm';
import { courseTimeZone } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import { machines } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { MachineProvider } from './providers/types';

/** Desktops made per round (one after another: a start that comes meanwhile is never queued behind many). */
const PER_ROUND = 4;
/** A desktop that could not be made is tried again after this long (the engine down, the image not built yet). */
export const PREPARE_RETRY_MS = 60_000;

export interface Preparer {
  /** Makes the next few new machines' desktops unless a round is under way; never waits for it. */
  nudge(): void;
  /** The round under way, if any (tests). */
  idle(): Promise<void>;
  /** No more rounds; the one under way ends after the desktop it is making. */
  close(): Promise<void>;
}

interface Deps {
  db: Db;
  clock: Clock;
  provider: MachineProvider;
  log: { warn(o: object, msg: string): void };
}

/** A machine whose desktop is not made yet. */
type Unmade = { id: string; name: string; region: string; homeKey: string | null };

/**
 * A new machine's first start made its desktop (on LXD: the instance from the image and its home volume) before
 * starting it: 0.4 s of a first start's 3.4 s on a slow 2-core host (bench:providers), and for a class's first
 * Start All forty instances made while forty start. The preparer makes them ahead, while nothing starts: a machine that is
 * wanted stopped, offline, not being reset, and not made yet (`prepared_at` null: a new one, or one reset since).
 * The provider's prepare is idempotent and serialized with the machine's start, so a Start that comes meanwhile waits
 * for it and finds the desktop made. Run by the reconciler's leader after a pass with no start in it.
 */
export function createPreparer(deps: Deps): Preparer {
  const { db, clock, provider, log } = deps;
  const prepare = provider.prepare?.bind(provider);
  const failedAt = new Map<string, number>();
  let round: Promise<void> | null = null;
  let closed = false;

  async function next(): Promise<Unmade[]> {
    const now = clock.now().getTime();
    for (const [id, at] of failedAt) if (at + PREPARE_RETRY_MS <= now) failedAt.delete(id);
    const rows = await db
      .select({ id: machines.id, name: machines.name, region: machines.region, homeKey: machines.homeKey })
      .from(machines)
      .where(and(isNull(machines.preparedAt), eq(machines.desired, 'stopped'), eq(machines.observed, 'offline'), isNull(machines.resetRequested)))
      .orderBy(asc(machines.createdAt))
      .limit(PER_ROUND + failedAt.size);
    return rows.filter((r) => !failedAt.has(r.id)).slice(0, PER_ROUND);
  }

  async function prepareOne(make: NonNullable<typeof prepare>, m: Unmade): Promise<void> {
    try {
      await make({ machineId: m.id, name: m.name, homeKey: m.homeKey ?? undefined, timeZone: courseTimeZone(m.region) });
      failedAt.delete(m.id);
      await db.update(machines).set({ preparedAt: clock.now() }).where(and(eq(machines.id, m.id), isNull(machines.preparedAt)));
    } catch (err) {
      failedAt.set(m.id, clock.now().getTime());
      log.warn({ err, machineId: m.id }, "making a new machine's desktop ahead of its start failed; its start makes it");
    }
  }

  async function run(make: NonNullable<typeof prepare>): Promise<void> {
    try {
      for (const m of await next()) {
        if (closed) break;
        await prepareOne(make, m);
      }
    } catch (err) {
      log.warn({ err }, 'looking for new machines to prepare failed');
    } finally {
      round = null;
    }
  }

  return {
    nudge() {
      if (!prepare || round || closed) return;
      round = run(prepare);
    },
    idle: () => round ?? Promise.resolve(),
    close() {
      closed = true;
      return round ?? Promise.resolve();
    },
  };
}
