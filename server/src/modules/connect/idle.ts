import { and, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { transaction } from '../../db/after-commit';
import { connectSessions, machines } from '../../db/schema/index';
import type { Job } from '../../lib/jobs';
import type { ConnectDeps } from './deps';
import type { Gateway } from './gateway';
import { sweepTickets } from './tickets';

/** How often the idle job looks: every 30 s, or every eighth of a shorter idle limit (at least 5 s), so a stop comes on time. */
export const idleJobIntervalMs = (idleMs: number) => Math.min(30_000, Math.max(5_000, idleMs / 8));
const WARN_BEFORE_MS = 5 * 60_000;

export const idleReasonText = (minutes: number) => `Stopped after ${minutes} minute${minutes === 1 ? '' : 's'} without use.`;

/**
 * The last sign of use of a machine, in epoch ms: it came online, a client connected or disconnected, or a client
 * sent input. With a client connected and silent, the connect time is the last sign, so "no client for N minutes"
 * and "no input for N minutes while connected" are one rule.
 */
const lastActivity = sql<number>`(extract(epoch from greatest(
  coalesce(${machines.onlineSince}, ${machines.updatedAt}),
  max(${connectSessions.openedAt}), max(${connectSessions.closedAt}), max(${connectSessions.lastInputAt})
)) * 1000)::float8`;

function runningMachines(q: Queryable) {
  return q
    .select({ id: machines.id, lastActivity })
    .from(machines)
    .leftJoin(connectSessions, eq(connectSessions.machineId, machines.id))
    .where(and(eq(machines.observed, 'online'), eq(machines.desired, 'running')))
    .groupBy(machines.id)
    .$dynamic();
}

/**
 * Idle protection: a running machine nobody used for IDLE_STOP_MINUTES is stopped (the user is told why on the
 * dashboard); connected users get a 'Still there?' warning 5 minutes before. Runs on every server: each warns its
 * own sessions, and the stop re-checks under a row lock, so passes may overlap.
 */
export function createIdleJob(deps: ConnectDeps, gateway: Gateway): Job {
  const idleMs = deps.idleStopMinutes * 60_000;
  const warnMs = Math.min(WARN_BEFORE_MS, idleMs / 2);

  async function stopIfStillIdle(machineId: string, now: Date): Promise<boolean> {
    return transaction(deps.db, async (tx) => {
      const locked = await tx
        .select({ id: machines.id })
        .from(machines)
        .where(and(eq(machines.id, machineId), eq(machines.observed, 'online'), eq(machines.desired, 'running')))
        .for('update');
      if (locked.length === 0) return false;
      const [again] = await runningMachines(tx).having(eq(machines.id, machineId));
      if (!again || now.getTime() - again.lastActivity < idleMs) return false;
      await deps.machines.requestStop(tx, [machineId], deps.idleReason, 'idle');
      return true;
    });
  }

  return {
    name: 'connect-idle',
    intervalMs: idleJobIntervalMs(idleMs),
    async runOnce() {
      const now = deps.clock.now();
      await gateway.flushInput();
      const cutoff = now.getTime() - (idleMs - warnMs);
      const rows = await runningMachines(deps.db).having(sql`${lastActivity} <= ${cutoff}`);
      for (const row of rows) {
        const stopAt = new Date(row.lastActivity + idleMs);
        if (stopAt.getTime() > now.getTime()) {
          gateway.warn(row.id, stopAt);
          continue;
        }
        if (await stopIfStillIdle(row.id, now)) {
          deps.log.info({ machineId: row.id, idleMinutes: deps.idleStopMinutes }, 'machine stopped for idleness');
          gateway.endMachine(row.id, { type: 'stopped', code: 'idle', reason: deps.idleReason });
        }
      }
      await sweepTickets(deps.db, now);
    },
  };
}
