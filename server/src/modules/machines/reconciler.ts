import { and, eq, ne, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { machines } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../context';
import { audienceOf, type Events } from './events';
import { inPool } from './pool';
import { rfbAnswers } from './providers/rfb';
import type { Endpoint, MachineProvider } from './providers/types';

const LEADER_LOCK = 727_002; // advisory lock id: one reconciling server at a time
export const START_TIMEOUT_MS = 90_000;
const HEALTH_EVERY_MS = 5_000;
const FOLLOW_UP_MS = 250;

export const startTimedOut = (ms: number) => `The machine did not start within ${Math.round(ms / 1000)} seconds. Please try again.`;
export const START_FAILED = 'The machine could not be started. Please try again.';

export interface ReconcilerDeps {
  database: Database;
  clock: Clock;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  provider: MachineProvider;
  events: Events;
  /** Charges the minutes due before a machine goes offline (metering.settle). */
  settle(machineId: string, onlineSince: Date, at: Date): Promise<unknown>;
  startTimeoutMs?: number;
  concurrency?: number;
  intervalMs?: number;
}

export interface Reconciler {
  job: Job;
  /** One pass now (what the job runs); later calls while a pass is in flight queue one more pass. */
  runOnce(): Promise<void>;
  /** Asks for a pass soon (after a start or stop request); does nothing until the loop runs. */
  kick(): void;
  isLeader(): boolean;
  close(): Promise<void>;
}

type Row = {
  id: string;
  name: string;
  desired: 'running' | 'stopped';
  observed: 'offline' | 'processing' | 'online';
  processingSince: Date | null;
  onlineSince: Date | null;
};

/**
 * Converges observed machine state to desired state (design §5). The API only writes `desired`; this loop is the
 * only writer of `observed` and the only caller of the provider's start/stop, always outside transactions.
 * Every step is idempotent and every write is conditional on the state it read, so a crash anywhere is repaired
 * by the next pass and a request that lands mid-pass is never overwritten. One leader at a time holds a
 * session advisory lock on a pinned connection.
 */
export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { database, clock, log, provider, events } = deps;
  const db = database.db;
  const timeoutMs = deps.startTimeoutMs ?? START_TIMEOUT_MS;
  const lastHealth = new Map<string, number>();
  let conn: Awaited<ReturnType<Database['pinned']>> | null = null;
  let leader = false;
  let inflight: Promise<void> | null = null;
  let again = false;
  let active = false;
  let closed = false;
  let followUp: NodeJS.Timeout | null = null;

  async function ensureLeader(): Promise<boolean> {
    try {
      if (!conn) conn = await database.pinned();
      if (leader) {
        await conn.exec('select 1');
        return true;
      }
      const [row] = (await conn.exec(`select pg_try_advisory_lock(${LEADER_LOCK}) as ok`)) as { ok: boolean }[];
      leader = row?.ok === true;
      if (leader) log.info({}, 'machine reconciler is the leader');
    } catch (err) {
      log.warn({ err }, 'reconciler lost its database connection; leadership released');
      leader = false;
      conn?.release();
      conn = null;
    }
    return leader;
  }

  const publish = async (id: string) => events.publish(await audienceOf(db, id), { type: 'balance' });

  async function markOnline(r: Row, endpoint: Endpoint) {
    const now = clock.now();
    const res = await db
      .update(machines)
      .set({ observed: 'online', onlineSince: now, processingSince: null, stopReason: null, provider: provider.kind, providerRef: endpoint, updatedAt: now })
      .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), ne(machines.observed, 'online')))
      .returning({ id: machines.id });
    if (res.length) {
      log.info({ machineId: r.id }, 'machine online');
      await publish(r.id);
    }
  }

  /** A start that cannot succeed: clean up, then desired=stopped with the reason (only if no newer start came). */
  async function fail(r: Row, reason: string) {
    log.warn({ machineId: r.id, reason }, 'machine start failed');
    await provider.stop(r.id).catch((err) => log.error({ err, machineId: r.id }, 'cleanup after a failed start failed'));
    const now = clock.now();
    const res = await db
      .update(machines)
      .set({ desired: 'stopped', observed: 'offline', processingSince: null, onlineSince: null, stopReason: reason, updatedAt: now })
      .where(
        and(
          eq(machines.id, r.id),
          eq(machines.desired, 'running'),
          // Same start attempt (a newer request reset processing_since); compared to the millisecond.
          r.processingSince
            ? sql`abs(extract(epoch from (${machines.processingSince} - ${r.processingSince.toISOString()}::timestamptz))) < 0.001`
            : sql`true`,
        ),
      )
      .returning({ id: machines.id });
    if (res.length) await publish(r.id);
  }

  async function goOffline(r: Row) {
    await provider.stop(r.id);
    const now = clock.now();
    if (r.onlineSince) await deps.settle(r.id, r.onlineSince, now);
    const res = await db
      .update(machines)
      .set({ observed: 'offline', processingSince: null, onlineSince: null, updatedAt: now })
      .where(and(eq(machines.id, r.id), eq(machines.desired, 'stopped')))
      .returning({ id: machines.id });
    lastHealth.delete(r.id);
    if (res.length) {
      log.info({ machineId: r.id }, 'machine offline');
      await publish(r.id);
    }
  }

  async function converge(r: Row): Promise<boolean> {
    const now = clock.now();
    if (r.desired === 'stopped') {
      await goOffline(r);
      return false;
    }
    if (r.observed === 'online' && now.getTime() - (lastHealth.get(r.id) ?? 0) < HEALTH_EVERY_MS) return false;
    if (r.observed === 'offline') {
      // Desired running but never marked processing (a writer other than requestStart): start counting now.
      await db
        .update(machines)
        .set({ observed: 'processing', processingSince: now, updatedAt: now })
        .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), eq(machines.observed, 'offline')));
      r = { ...r, observed: 'processing', processingSince: now };
    }
    const d = await provider.describe(r.id);
    if (d.state === 'running' && d.endpoint && (await rfbAnswers(d.endpoint))) {
      lastHealth.set(r.id, now.getTime());
      if (r.observed !== 'online') await markOnline(r, d.endpoint);
      return false;
    }
    if (r.observed === 'online') {
      if (d.state !== 'stopped') return false; // VNC busy for a moment; the desktop is still there
      // The desktop died while online: charge what was used, then bring it back.
      log.warn({ machineId: r.id, reason: d.reason }, 'online machine lost its desktop; restarting it');
      if (r.onlineSince) await deps.settle(r.id, r.onlineSince, now);
      const res = await db
        .update(machines)
        .set({ observed: 'processing', processingSince: now, onlineSince: null, updatedAt: now })
        .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), eq(machines.observed, 'online')))
        .returning({ id: machines.id });
      if (!res.length) return false;
      await publish(r.id);
      r = { ...r, observed: 'processing', processingSince: now, onlineSince: null };
    }
    if (r.processingSince && now.getTime() - r.processingSince.getTime() > timeoutMs) {
      await fail(r, startTimedOut(timeoutMs));
      return false;
    }
    if (d.state === 'stopped') {
      try {
        await provider.start({ machineId: r.id, name: r.name });
      } catch (err) {
        log.error({ err, machineId: r.id }, 'provider refused to start a machine');
        await fail(r, START_FAILED);
        return false;
      }
    }
    return true; // coming up: look again soon
  }

  async function pass(): Promise<boolean> {
    if (!(await ensureLeader())) return false;
    const rows = (await db
      .select({
        id: machines.id,
        name: machines.name,
        desired: machines.desired,
        observed: machines.observed,
        processingSince: machines.processingSince,
        onlineSince: machines.onlineSince,
      })
      .from(machines)
      .where(or(eq(machines.desired, 'running'), ne(machines.observed, 'offline')))) as Row[];
    const known = new Set(rows.map((r) => r.id));
    // Desktops of machines that should not run (a stop interrupted by a crash, a deleted machine): end them.
    const orphans = (await provider.list()).filter((id) => !known.has(id));
    let pending = false;
    const work: (() => Promise<void>)[] = [
      ...orphans.map((id) => async () => {
        log.warn({ machineId: id }, 'ending a desktop whose machine should not run');
        await provider.stop(id);
      }),
      ...rows.map((r) => async () => {
        pending = (await converge(r)) || pending;
      }),
    ];
    await inPool(work, deps.concurrency ?? 8, async (w) => {
      try {
        await w();
      } catch (err) {
        log.error({ err }, 'reconciling a machine failed; the next pass retries');
      }
    });
    return pending;
  }

  function gate(): Promise<void> {
    if (closed) return Promise.resolve();
    if (inflight) {
      again = true;
      return inflight;
    }
    inflight = (async () => {
      try {
        let pending = false;
        do {
          again = false;
          try {
            pending = await pass();
          } catch (err) {
            log.error({ err }, 'reconciler pass failed');
          }
        } while (again && !closed);
        if (pending && active && !closed && !followUp) {
          followUp = setTimeout(() => {
            followUp = null;
            void gate();
          }, FOLLOW_UP_MS);
        }
      } finally {
        inflight = null;
      }
    })();
    return inflight;
  }

  const runOnce = () => {
    active = true;
    return gate();
  };

  return {
    runOnce,
    kick() {
      if (!active || closed) return;
      setTimeout(() => void gate(), 20);
    },
    isLeader: () => leader,
    job: { name: 'machines-reconciler', intervalMs: deps.intervalMs ?? 1000, runOnce },
    async close() {
      closed = true;
      if (followUp) clearTimeout(followUp);
      await inflight?.catch(() => undefined);
      if (conn) {
        if (leader) await conn.exec(`select pg_advisory_unlock(${LEADER_LOCK})`).catch(() => undefined);
        conn.release();
        conn = null;
      }
      leader = false;
    },
  };
}
