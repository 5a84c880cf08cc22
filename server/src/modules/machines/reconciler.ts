import { eq, isNotNull, ne, or } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { machines } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import { audienceOf, type Events } from './events';
import { inPool } from './pool';
import { createPreparer } from './preparer';
import type { MachineProvider } from './providers/types';
import { converge, START_TIMEOUT_MS, type Row, type StepDeps } from './reconciler-steps';
import { reconcilerErrors } from '../metrics/metrics';

const LEADER_LOCK = 727_002; // advisory lock id: one reconciling server at a time
const FOLLOW_UP_MS = 250;
/**
 * Leadership is a lease: PostgreSQL ends the leader's session (and so frees its lock) after this long without a
 * statement (idle_session_timeout), and TCP keepalive probes a silent peer, so a leader whose host vanished or whose
 * connection is half-open loses the lock within about LEASE_MS; a killed process loses it at once (its socket
 * closes). The pinned connection is pinged every HEARTBEAT_MS, also during a long pass, and every server that is
 * not the leader asks for the lock on every pass (intervalMs, 1 s), so leadership moves within LEASE_MS + 1 s.
 */
export const LEASE_MS = 10_000;
const HEARTBEAT_MS = 2_000;
const SESSION_SETTINGS = [
  `set idle_session_timeout = ${LEASE_MS}`,
  'set tcp_keepalives_idle = 5',
  'set tcp_keepalives_interval = 2',
  'set tcp_keepalives_count = 2',
];

export { START_TIMEOUT_MS, START_FAILED, startTimedOut } from './reconciler-steps';

export interface ReconcilerDeps {
  database: Database;
  clock: Clock;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  provider: MachineProvider;
  events: Events;
  /** Charges the minutes due before a machine goes offline (metering.settle). */
  settle(machineId: string, onlineSince: Date, at: Date): Promise<unknown>;
  startTimeoutMs?: number;
  /** Starts (and health looks) at a time; default 8. */
  concurrency?: number;
  /** Stops (and orphan desktops ended) at a time; default 40. */
  stopConcurrency?: number;
  intervalMs?: number;
}

export interface Reconciler {
  job: Job;
  /** One pass now (what the job runs); later calls while a pass is in flight queue one more pass. */
  runOnce(): Promise<void>;
  /** Asks for a pass soon (after a start or stop request); does nothing until the loop runs. */
  kick(): void;
  isLeader(): boolean;
  /** The round of new machines' desktops being made ahead of their first start, if any (preparer.ts). */
  prepared(): Promise<void>;
  close(): Promise<void>;
}


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
  let conn: Awaited<ReturnType<Database['pinned']>> | null = null;
  let leader = false;
  let inflight: Promise<void> | null = null;
  let again = false;
  let active = false;
  let closed = false;
  let followUp: NodeJS.Timeout | null = null;
  let heartbeat: NodeJS.Timeout | null = null;

  /** A pinned connection with the lease settings (PostgreSQL; a setting the server lacks is skipped). */
  async function open(): Promise<NonNullable<typeof conn>> {
    const c = await database.pinned();
    if (database.kind !== 'postgres') return c; // PGlite: one process, one connection, no lease to keep
    for (const s of SESSION_SETTINGS) await c.exec(s).catch((err) => log.warn({ err, setting: s }, 'reconciler session setting refused'));
    heartbeat ??= setInterval(() => void ping(), HEARTBEAT_MS);
    heartbeat.unref();
    return c;
  }

  function drop(err: unknown): void {
    if (leader) log.warn({ err }, 'reconciler lost its database connection; leadership released');
    leader = false;
    conn?.release(true);
    conn = null;
  }

  /** Keeps the lease alive between passes; a failed ping means the session (and the lock) is gone. */
  async function ping(): Promise<void> {
    const c = conn;
    if (!c || closed) return;
    try {
      await c.exec('select 1');
    } catch (err) {
      if (conn === c) drop(err);
    }
  }

  async function ensureLeader(): Promise<boolean> {
    try {
      if (!conn) conn = await open();
      if (leader) {
        await conn.exec('select 1');
        return true;
      }
      const [row] = (await conn.exec(`select pg_try_advisory_lock(${LEADER_LOCK}) as ok`)) as { ok: boolean }[];
      leader = row?.ok === true;
      if (leader) log.info({}, 'machine reconciler is the leader');
    } catch (err) {
      drop(err);
    }
    return leader;
  }

  const steps: StepDeps = {
    db,
    clock,
    log,
    provider,
    settle: deps.settle,
    timeoutMs: deps.startTimeoutMs ?? START_TIMEOUT_MS,
    lastHealth: new Map<string, number>(),
    startBegan: new Map(),
    publish: async (id) => events.publish(await audienceOf(db, id), { type: 'balance' }),
  };
  const preparer = createPreparer({ db, clock, provider, log });

  /** The machines that should run or still have a desktop. */
  async function loadRows(): Promise<Row[]> {
    return (await db
      .select({
        id: machines.id,
        name: machines.name,
        desired: machines.desired,
        observed: machines.observed,
        processingSince: machines.processingSince,
        onlineSince: machines.onlineSince,
        lastSeenAt: machines.lastSeenAt,
        region: machines.region,
        homeKey: machines.homeKey,
        runningHomeKey: machines.runningHomeKey,
        resetRequested: machines.resetRequested,
      })
      .from(machines)
      .where(or(eq(machines.desired, 'running'), ne(machines.observed, 'offline'), isNotNull(machines.resetRequested)))) as Row[];
  }

  async function pass(): Promise<boolean> {
    if (!(await ensureLeader())) return false;
    const rows = await loadRows();
    const known = new Set(rows.map((r) => r.id));
    // Desktops of machines that should not run (a stop interrupted by a crash, a deleted machine): end them.
    const orphans = (await provider.list()).filter((id) => !known.has(id));
    let pending = false;
    const converging = (r: Row) => async () => {
      pending = (await converge(steps, r)) || pending;
    };
    // Stops only wait (for processes to end): they all go at once. Starts use the CPU: a few at a time.
    const stops: (() => Promise<void>)[] = [
      ...orphans.map((id) => async () => {
        log.warn({ machineId: id }, 'ending a desktop whose machine should not run');
        await provider.stop(id);
      }),
      ...rows.filter((r) => r.desired === 'stopped').map(converging),
    ];
    const rest = rows.filter((r) => r.desired !== 'stopped').map(converging);
    const attempt = async (w: () => Promise<void>) => {
      try {
        await w();
      } catch (err) {
        reconcilerErrors.inc({ kind: 'machine' });
        log.error({ err }, 'reconciling a machine failed; the next pass retries');
      }
    };
    await Promise.all([inPool(stops, deps.stopConcurrency ?? 40, attempt), inPool(rest, deps.concurrency ?? 8, attempt)]);
    // New machines' desktops are made ahead of their first start, only while none starts (it never waits for them).
    if (!rows.some((r) => r.desired === 'running' && r.observed !== 'online')) preparer.nudge();
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
            reconcilerErrors.inc({ kind: 'pass' });
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
    prepared: () => preparer.idle(),
    job: { name: 'machines-reconciler', intervalMs: deps.intervalMs ?? 1000, runOnce },
    async close() {
      closed = true;
      if (followUp) clearTimeout(followUp);
      if (heartbeat) clearInterval(heartbeat);
      await inflight?.catch(() => undefined);
      await preparer.close();
      if (conn) {
        if (leader) await conn.exec(`select pg_advisory_unlock(${LEADER_LOCK})`).catch(() => undefined);
        conn.release(database.kind === 'postgres');
        conn = null;
      }
      leader = false;
    },
  };
}
