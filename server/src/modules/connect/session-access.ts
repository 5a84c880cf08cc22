import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { GATEWAY_CLOSE, type GatewayServerMessage } from '@hyperdesk/contract';
import { courses, machines, users } from '../../db/schema/index';
import type { Principal } from '../identity/tokens';
import { endedByInstructor, SESSION_ENDED_BY_INSTRUCTOR } from '../courses/seat-sessions';
import { seatWatchersOf } from '../machines/events';
import { canConnect, type MachineRow } from './access';
import type { ConnectDeps } from './deps';

export type Stopped = Extract<GatewayServerMessage, { type: 'stopped' }>;
export const STOPPED_FROM_DASHBOARD = 'It was stopped from the dashboard.';
export const STOPPED_BY_INSTRUCTOR = 'Your instructor stopped it.';
/** How a session ends: the WebSocket's close code, the reason logged and recorded, what the tab is told. */
export interface Ending {
  code: number;
  why: string;
  msg?: Stopped;
}
export const ACCESS_LOST: Ending = { code: GATEWAY_CLOSE.accessLost, why: 'access-lost', msg: { type: 'stopped', code: 'access-lost', reason: 'You no longer have access to this machine.' } };

/** What a desktop session asks the database: who the user is now, whether they may go on, why a machine stopped. */
export function createSessionAccess(deps: ConnectDeps) {
  /**
   * The user as access checks need them; null when the account is gone or disabled, or its password changed after `since`
   * (a change or reset revokes every sign-in, and an open desktop session is one of them).
   */
  async function principalOf(userId: string, since: Date): Promise<Principal | null> {
    const [u] = await deps.db.select().from(users).where(eq(users.id, userId)).limit(1);
    if (!u || u.disabledAt || u.passwordChangedAt.getTime() > since.getTime()) return null;
    return { uid: u.id, email: u.email, name: u.displayName, instructor: u.instructor, admin: u.admin, emailVerified: !!u.emailVerifiedAt };
  }

  /** Why a machine is not reachable any more, as the tab of `viewer` (a user id) shows it. */
  async function stoppedMessage(m: MachineRow, viewer: string): Promise<Stopped> {
    const left = await deps.ledger.remainingMinutes(deps.db, m.id, deps.clock.now());
    if (left <= 0) return { type: 'stopped', code: 'hours-exhausted', reason: m.stopReason ?? 'You have used all the hours of this machine.' };
    if (m.stopReason && m.stopReason === deps.idleReason) return { type: 'stopped', code: 'idle', reason: m.stopReason };
    return { type: 'stopped', code: 'machine-stopped', reason: m.stopReason ?? (await plainStop(m, viewer)) };
  }

  /** A stop that gave no reason: a student did not stop the course's machine from a dashboard, the instructor did. */
  async function plainStop(m: MachineRow, viewer: string): Promise<string> {
    if (m.stoppedBy === 'instructor' && m.courseId) {
      const [c] = await deps.db.select({ owner: courses.ownerUserId }).from(courses).where(eq(courses.id, m.courseId)).limit(1);
      if (c && c.owner !== viewer) return STOPPED_BY_INSTRUCTOR;
    }
    return STOPPED_FROM_DASHBOARD;
  }

  /** Why an open session must end now (the user lost access, the machine stopped), or null while it may go on. */
  async function endingOf(uid: string, machineId: string, openedAt: Date): Promise<Ending | null> {
    const who = await principalOf(uid, openedAt);
    const m = who ? await canConnect(deps.db, who, machineId) : null;
    const stopped = async (row: MachineRow): Promise<Ending> => ({ code: GATEWAY_CLOSE.machineStopped, why: 'machine-stopped', msg: await stoppedMessage(row, uid) });
    if (m) return m.desired !== 'running' || m.observed !== 'online' ? stopped(m) : null;
    // Stop All frees the seats too: a machine that is stopping was stopped, whatever access says now.
    const [row] = await deps.db.select().from(machines).where(eq(machines.id, machineId)).limit(1);
    if (row && row.desired !== 'running') return stopped(row);
    if (row?.courseId && (await endedByInstructor(deps.db, row.courseId, uid, deps.clock.now()))) {
      return { code: GATEWAY_CLOSE.accessLost, why: 'session-ended', msg: { type: 'stopped', code: 'session-ended', reason: SESSION_ENDED_BY_INSTRUCTOR } };
    }
    return ACCESS_LOST;
  }

  /**
   * Classrooms: the instructor's seat table shows who sits where as soon as a student is in. Only the instructor
   * hears it: each student's open session re-checks its access on every event, so telling the whole roster made a
   * class of 40 connecting at once 40 × 40 checks.
   */
  function announceSeat(courseId: string, log: FastifyBaseLogger): void {
    const events = deps.events;
    if (!events) return;
    seatWatchersOf(deps.db, courseId)
      .then((ids) => events.publish(ids, { type: 'balance' }))
      .catch((err) => log.warn({ err }, 'could not announce a seat'));
  }

  return { principalOf, stoppedMessage, endingOf, announceSeat };
}
