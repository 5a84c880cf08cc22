import { and, eq, inArray, or, sql } from 'drizzle-orm';
import type { Database, Queryable } from '../../db/client';
import { afterCommit } from '../../db/after-commit';
import { machines } from '../../db/schema/index';
import type { ResetKind, StoppedBy } from '../../db/schema/machines';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import type { Ledger } from '../ledger/service';
import { audienceOf, type Events } from './events';
import { COURSE_ENDED, createMetering, type Metering } from './metering';
import { createReconciler, type Reconciler, type ReconcilerDeps } from './reconciler';
import type { Endpoint, MachineProvider } from './providers/types';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * ctx.machines: what other domains call. Callers check ownership and hours before asking for a start. A request
 * inside a transaction needs one made by `transaction()` (db/after-commit): it is announced once that commits.
 */
export interface Machines {
  /** desired=running; offline machines become processing (processing_since=now, stop_reason cleared). */
  requestStart(q: Queryable, machineIds: string[]): Promise<void>;
  /**
   * desired=stopped, with the reason the dashboard shows when the machine stopped on its own, and who or what
   * stopped it (`by`, kept for the operator console). Without `by` the machine's controller asked: its owner for a
   * single machine, the instructor for a course machine, or the course's end when the reason says so.
   */
  requestStop(q: Queryable, machineIds: string[], reason?: string, by?: StoppedBy): Promise<void>;
  /**
   * Reset machine: the reconciler brings the desktop back to the image ('desktop': the home stays; 'home': erased
   * too); a running machine restarts fresh, a stopped one gets its fresh desktop at the next start.
   */
  requestReset(q: Queryable, machineId: string, kind: ResetKind): Promise<void>;
  /** Where the gateway reaches the desktop; only while the machine is online. */
  endpointOf(machineId: string): Promise<Endpoint | null>;
  /** Where the machine's streaming agent listens (WebRTC signaling), when it is online and one runs. */
  agentOf(machineId: string): Promise<Endpoint | null>;
  provider: MachineProvider;
  reconciler: Reconciler;
  metering: Metering;
  /** Resolves once every start, stop and reset asked for so far has been announced to its dashboards. */
  announced(): Promise<void>;
  /** Ends the loops and releases the leader lock (desktops keep running; the next server adopts them). */
  close(): Promise<void>;
}

export interface MachinesDeps {
  database: Database;
  clock: Clock;
  log: ReconcilerDeps['log'];
  ledger: Ledger;
  events: Events;
  provider: MachineProvider;
  startTimeoutMs?: number;
}

export function createMachines(deps: MachinesDeps): { machines: Machines; jobs: Job[] } {
  const { database, clock, events, provider } = deps;
  const db = database.db;

  /** Once the caller's transaction has committed (db/after-commit): wake the reconciler and tell the dashboards. */
  const pending = new Set<Promise<void>>();
  const announce = (q: Queryable, ids: string[]) =>
    afterCommit(q, () => {
      // A failure here is logged, never the caller's: its change is committed.
      const done = Promise.resolve()
        .then(() => {
          events.signal('reconcile'); // the leader may be another server
          return Promise.all(ids.map((id) => audienceOf(db, id)));
        })
        .then((lists) => events.publish(lists.flat(), { type: 'balance' }))
        .catch((err) => deps.log.warn({ err }, 'could not announce a machine request'))
        .finally(() => pending.delete(done));
      pending.add(done);
    });

  const requestStop = async (q: Queryable, machineIds: string[], reason?: string, by?: StoppedBy) => {
    const ids = machineIds.filter((id) => UUID.test(id));
    if (!ids.length) return;
    const now = clock.now();
    const controller = sql`case when ${machines.courseId} is null then 'user' when ${reason ?? null}::text = ${COURSE_ENDED} then 'course-end' else 'instructor' end`;
    const changed = await q
      .update(machines)
      .set({ desired: 'stopped', stopReason: reason ?? null, stoppedBy: by ?? controller, stoppedAt: now, updatedAt: now })
      .where(and(inArray(machines.id, ids), eq(machines.desired, 'running')))
      .returning({ id: machines.id });
    if (changed.length) announce(q, changed.map((r) => r.id));
  };

  const metering = createMetering({ db, ledger: deps.ledger, clock, log: deps.log, stop: (ids, reason, by) => requestStop(db, ids, reason, by) });
  const reconciler = createReconciler({
    database,
    clock,
    log: deps.log,
    provider,
    events,
    settle: metering.settle,
    startTimeoutMs: deps.startTimeoutMs,
  });
  events.onSignal('reconcile', () => reconciler.kick());
  // A desktop that was starting answered: online now, not at the reconciler's next pass.
  provider.onChange?.(() => reconciler.kick());
  const meterJob: Job = {
    ...metering.job,
    // Every server could meter safely (debits are idempotent); the leader does it so the work is done once.
    runOnce: async () => {
      if (reconciler.isLeader()) await metering.runOnce();
    },
  };

  /**
   * A connecting tab's way to an online machine's desktop: where the provider says its VNC server and agent are (no
   * probe: the reconciler watches the desktop's health), or what describe finds on a provider that cannot say.
   */
  async function endpointsOf(machineId: string): Promise<{ endpoint?: Endpoint; agent?: Endpoint } | null> {
    if (!UUID.test(machineId)) return null;
    const [row] = await db.select({ observed: machines.observed }).from(machines).where(eq(machines.id, machineId));
    if (row?.observed !== 'online') return null;
    if (provider.endpoints) return provider.endpoints(machineId);
    const d = await provider.describe(machineId);
    return d.state === 'running' ? d : null;
  }

  const machinesService: Machines = {
    async requestStart(q, machineIds) {
      const ids = machineIds.filter((id) => UUID.test(id));
      if (!ids.length) return;
      const now = clock.now();
      const offline = sql`${machines.observed} = 'offline'`;
      const changed = await q
        .update(machines)
        .set({
          desired: 'running',
          observed: sql`case when ${offline} then 'processing' else ${machines.observed} end`,
          processingSince: sql`case when ${offline} then ${now.toISOString()}::timestamptz else ${machines.processingSince} end`,
          stopReason: sql`case when ${offline} then null else ${machines.stopReason} end`,
          updatedAt: now,
        })
        .where(and(inArray(machines.id, ids), or(eq(machines.desired, 'stopped'), eq(machines.observed, 'offline'))))
        .returning({ id: machines.id });
      if (changed.length) announce(q, changed.map((r) => r.id));
    },
    requestStop,
    async requestReset(q, machineId, kind) {
      if (!UUID.test(machineId)) return;
      // 'home' wins over a pending 'desktop' (the stronger request), never the other way round.
      await q
        .update(machines)
        .set({ resetRequested: sql`case when ${machines.resetRequested} = 'home' then 'home' else ${kind} end`, updatedAt: clock.now() })
        .where(eq(machines.id, machineId));
      announce(q, [machineId]);
    },
    async endpointOf(machineId) {
      return (await endpointsOf(machineId))?.endpoint ?? null;
    },
    async agentOf(machineId) {
      return (await endpointsOf(machineId))?.agent ?? null;
    },
    provider,
    reconciler,
    metering,
    announced: async () => {
      while (pending.size) await Promise.all(pending);
    },
    close: () => reconciler.close(),
  };
  return { machines: machinesService, jobs: [reconciler.job, meterJob] };
}
