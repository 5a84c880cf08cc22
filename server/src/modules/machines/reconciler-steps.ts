import { and, eq, ne, sql } from 'drizzle-orm';
import { courseTimeZone } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import { machines } from '../../db/schema/index';
import type { ResetKind } from '../../db/schema/machines';
import type { Clock } from '../../lib/clock';
import { chargeableUntil, SEEN_GRACE_MS } from './metering';
import { rfbAnswers } from './providers/rfb';
import type { Endpoint, MachineProvider, ObservedDesktop } from './providers/types';
import { machineStartSeconds, machineStopSeconds, reconcilerErrors } from '../metrics/metrics';

/** How often an online machine's desktop is probed (and its last-seen heartbeat written). */
export const HEALTH_EVERY_MS = 5_000;
export const START_TIMEOUT_MS = 90_000;

export const startTimedOut = (ms: number) => `The machine did not start within ${Math.round(ms / 1000)} seconds. Please try again.`;
export const START_FAILED = 'The machine could not be started. Please try again.';

export type Row = {
  id: string;
  name: string;
  desired: 'running' | 'stopped';
  observed: 'offline' | 'processing' | 'online';
  processingSince: Date | null;
  onlineSince: Date | null;
  lastSeenAt: Date | null;
  /** The machine's country (its desktop's clock shows that country's time). */
  region: string;
  homeKey: string | null;
  runningHomeKey: string | null;
  resetRequested: ResetKind | null;
};

/** The home folder the machine's desktop should have: the seated student's on course machines, else its own. */
export const wantedHome = (r: Pick<Row, 'id' | 'homeKey'>) => r.homeKey ?? r.id;

/** False while a course machine still runs the previous student's home (the reconciler is switching it). */
export const runsWantedHome = (m: Pick<Row, 'id' | 'homeKey' | 'runningHomeKey'>) => m.runningHomeKey === null || m.runningHomeKey === wantedHome(m);

export const SEAT_CHANGED = 'The machine was restarted for the student who took its seat.';
export const RESET_RESTART = 'The machine was reset and is starting again from a fresh desktop.';
export const resetDone = (kind: ResetKind) =>
  kind === 'home' ? 'The machine was reset: a fresh desktop and an empty home folder.' : 'The machine was reset to a fresh desktop; the home folder was kept.';

/** What the steps of one reconciler pass use. */
export interface StepDeps {
  db: Db;
  clock: Clock;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
  provider: MachineProvider;
  /** Tells the machine's owner / course audience that its state changed. */
  publish(machineId: string): Promise<void>;
  /** Charges the minutes due up to `at` (metering.settle). */
  settle(machineId: string, onlineSince: Date, at: Date): Promise<unknown>;
  timeoutMs: number;
  /** When each online machine was last probed by this process. */
  lastHealth: Map<string, number>;
  /** When this process first worked on each machine's current start (keyed by its processingSince). */
  startBegan: Map<string, { since: number; began: number }>;
}

/**
 * Whether the current start of a processing machine has had its time: counted from this process's first pass at it,
 * not from the request, since a start waits for a free slot (8 at a time: a class's first start of 40 new instances
 * queues for minutes) or for a server to lead, and that wait is not the desktop's.
 */
function startOverdue(d: StepDeps, r: Row, now: Date): boolean {
  if (!r.processingSince) return false;
  const since = r.processingSince.getTime();
  let entry = d.startBegan.get(r.id);
  if (entry?.since !== since) d.startBegan.set(r.id, (entry = { since, began: now.getTime() }));
  return now.getTime() - entry.began > d.timeoutMs;
}

/** Charges what an online machine used, up to the moment it was last seen running (never an outage). */
async function settleSeen(d: StepDeps, r: Row, now: Date): Promise<void> {
  if (r.onlineSince) await d.settle(r.id, r.onlineSince, chargeableUntil(now, r.lastSeenAt, r.onlineSince));
}

export async function markOnline(d: StepDeps, r: Row, endpoint: Endpoint): Promise<void> {
  const now = d.clock.now();
  const res = await d.db
    .update(machines)
    .set({
      observed: 'online',
      onlineSince: now,
      lastSeenAt: now,
      processingSince: null,
      stopReason: null,
      provider: d.provider.kind,
      providerRef: endpoint.ref,
      runningHomeKey: wantedHome(r),
      preparedAt: sql`coalesce(${machines.preparedAt}, ${now})`, // its start made its desktop: the preparer need not
      updatedAt: now,
    })
    .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), ne(machines.observed, 'online')))
    .returning({ id: machines.id });
  d.startBegan.delete(r.id);
  if (res.length) {
    if (r.processingSince) machineStartSeconds.observe((now.getTime() - r.processingSince.getTime()) / 1000);
    d.log.info({ machineId: r.id }, 'machine online');
    await d.publish(r.id);
  }
}

/**
 * The heartbeat of an online machine. After a gap (this server, or every server, was down), the minutes of the
 * gap are not charged: the session is settled up to the last sighting and metering starts again from now.
 */
export async function markSeen(d: StepDeps, r: Row, now: Date): Promise<void> {
  const gap = r.lastSeenAt !== null && now.getTime() - r.lastSeenAt.getTime() > SEEN_GRACE_MS;
  if (gap) {
    await settleSeen(d, r, now);
    d.log.warn({ machineId: r.id, lastSeenAt: r.lastSeenAt }, 'machine seen again after a gap; the gap is not charged');
  }
  await d.db
    .update(machines)
    .set(gap ? { lastSeenAt: now, onlineSince: now } : { lastSeenAt: now })
    .where(and(eq(machines.id, r.id), eq(machines.observed, 'online')));
}

/** A start that cannot succeed: clean up, then desired=stopped with the reason (only if no newer start came). */
export async function fail(d: StepDeps, r: Row, reason: string): Promise<void> {
  d.log.warn({ machineId: r.id, reason }, 'machine start failed');
  reconcilerErrors.inc({ kind: 'start_failed' });
  d.startBegan.delete(r.id);
  await d.provider.stop(r.id).catch((err) => d.log.error({ err, machineId: r.id }, 'cleanup after a failed start failed'));
  const now = d.clock.now();
  const res = await d.db
    .update(machines)
    .set({ desired: 'stopped', observed: 'offline', processingSince: null, onlineSince: null, stopReason: reason, stoppedBy: 'failure', stoppedAt: now, updatedAt: now })
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
  if (res.length) await d.publish(r.id);
}

export async function goOffline(d: StepDeps, r: Row): Promise<void> {
  const began = performance.now();
  await d.provider.stop(r.id);
  const now = d.clock.now();
  await settleSeen(d, r, now);
  const res = await d.db
    .update(machines)
    .set({ observed: 'offline', processingSince: null, onlineSince: null, updatedAt: now })
    .where(and(eq(machines.id, r.id), eq(machines.desired, 'stopped')))
    .returning({ id: machines.id });
  d.lastHealth.delete(r.id);
  d.startBegan.delete(r.id);
  if (res.length) {
    machineStopSeconds.observe((performance.now() - began) / 1000);
    d.log.info({ machineId: r.id }, 'machine offline');
    await d.publish(r.id);
  }
}

/** The host of an online machine is gone (a lost cluster member): stopped with the reason; its next Start runs it elsewhere. */
async function hostLost(d: StepDeps, r: Row, reason: string, now: Date): Promise<void> {
  d.log.warn({ machineId: r.id }, 'the host of a machine went offline; marking it stopped');
  await settleSeen(d, r, now);
  d.lastHealth.delete(r.id);
  const res = await d.db
    .update(machines)
    .set({ desired: 'stopped', observed: 'offline', processingSince: null, onlineSince: null, runningHomeKey: null, stopReason: reason, stoppedBy: 'host-lost', stoppedAt: now, updatedAt: now })
    .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), eq(machines.observed, 'online')))
    .returning({ id: machines.id });
  if (res.length) await d.publish(r.id);
}

/** Desired running but never marked processing (a writer other than requestStart): start counting now. */
async function beginProcessing(d: StepDeps, r: Row, now: Date): Promise<Row> {
  await d.db
    .update(machines)
    .set({ observed: 'processing', processingSince: now, updatedAt: now })
    .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), eq(machines.observed, 'offline')));
  return { ...r, observed: 'processing', processingSince: now };
}

/** The seat of a running course machine went to another student: their home, not the last one's, and no old processes. */
async function switchHome(d: StepDeps, r: Row, now: Date): Promise<void> {
  d.log.info({ machineId: r.id, from: r.runningHomeKey, to: wantedHome(r) }, 'seat changed hands; restarting the desktop with the new home');
  await d.provider.stop(r.id);
  await restartLostDesktop(d, r, { state: 'stopped', reason: SEAT_CHANGED }, now);
}

/** The desktop of an online machine died (or was stopped for a new home): charge what was seen used, bring it back. */
async function restartLostDesktop(d: StepDeps, r: Row, desktop: ObservedDesktop, now: Date): Promise<Row | null> {
  d.log.warn({ machineId: r.id, reason: desktop.reason }, 'online machine lost its desktop; restarting it');
  await settleSeen(d, r, now);
  const res = await d.db
    .update(machines)
    .set({ observed: 'processing', processingSince: now, onlineSince: null, runningHomeKey: null, updatedAt: now })
    .where(and(eq(machines.id, r.id), eq(machines.desired, 'running'), eq(machines.observed, 'online')))
    .returning({ id: machines.id });
  if (!res.length) return null;
  await d.publish(r.id);
  return { ...r, observed: 'processing', processingSince: now, onlineSince: null };
}

/** Asks the provider for a desktop that is not there yet; false when the start failed for good. */
async function startDesktop(d: StepDeps, r: Row): Promise<boolean> {
  try {
    await d.provider.start({ machineId: r.id, name: r.name, homeKey: wantedHome(r), timeZone: courseTimeZone(r.region) });
    return true;
  } catch (err) {
    d.log.error({ err, machineId: r.id }, 'provider refused to start a machine');
    await fail(d, r, START_FAILED);
    return false;
  }
}

/**
 * Reset machine: a running desktop ends (the minutes it was seen running are charged) and comes back from the image
 * on the next pass; a stopped one is rebuilt at its next start. True when the machine should start again.
 */
async function resetDesktop(d: StepDeps, r: Row, kind: ResetKind, now: Date): Promise<boolean> {
  d.log.info({ machineId: r.id, kind }, 'resetting a machine');
  // The provider's reset ends the desktop first; then it is settled like a lost one (or, not wanted, taken offline).
  await d.provider.reset(r.id, { homeKey: wantedHome(r), eraseHome: kind === 'home' });
  if (r.desired === 'running' && r.observed === 'online') await restartLostDesktop(d, r, { state: 'stopped', reason: RESET_RESTART }, now);
  if (r.desired === 'stopped' && r.observed !== 'offline') await goOffline(d, r);
  d.lastHealth.delete(r.id);
  const done = await d.db
    .update(machines)
    .set({ resetRequested: null, preparedAt: null, ...(r.desired === 'stopped' ? { stopReason: resetDone(kind) } : {}), updatedAt: d.clock.now() })
    .where(and(eq(machines.id, r.id), eq(machines.resetRequested, kind)))
    .returning({ desired: machines.desired });
  await d.publish(r.id);
  return done[0]?.desired === 'running';
}

/** Brings one machine one step closer to its desired state; true when it is coming up (look again soon). */
export async function converge(d: StepDeps, row: Row): Promise<boolean> {
  let r = row;
  const now = d.clock.now();
  if (r.resetRequested) return resetDesktop(d, r, r.resetRequested, now);
  if (r.desired === 'stopped') {
    await goOffline(d, r);
    return false;
  }
  if (r.observed === 'online' && runsWantedHome(r) && now.getTime() - (d.lastHealth.get(r.id) ?? 0) < HEALTH_EVERY_MS) return false;
  if (r.observed === 'offline') r = await beginProcessing(d, r, now);
  const desktop = await d.provider.describe(r.id);
  if (desktop.state === 'running' && desktop.endpoint && (desktop.answered || (await rfbAnswers(desktop.endpoint)))) {
    d.lastHealth.set(r.id, now.getTime());
    if (r.observed === 'online' && r.runningHomeKey !== null && r.runningHomeKey !== wantedHome(r)) {
      await switchHome(d, r, now);
      return true;
    }
    if (r.observed === 'online') await markSeen(d, r, now);
    else await markOnline(d, r, desktop.endpoint);
    return false;
  }
  if (r.observed === 'online') {
    if (desktop.state !== 'stopped') return false; // VNC busy for a moment; the desktop is still there
    if (desktop.lost) {
      await hostLost(d, r, desktop.reason ?? 'The host this machine ran on went offline.', now);
      return false;
    }
    const restarted = await restartLostDesktop(d, r, desktop, now);
    if (!restarted) return false;
    r = restarted;
  }
  if (startOverdue(d, r, now)) {
    await fail(d, r, startTimedOut(d.timeoutMs));
    return false;
  }
  if (desktop.state === 'stopped' && !(await startDesktop(d, r))) return false;
  return true;
}
