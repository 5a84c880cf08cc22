import { randomUUID } from 'node:crypto';
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { AdjustmentAnswer, AdjustmentBody, AdminClaim, AdminMachine, AdminOrder, AdminUser, MachineAction, UserAction } from '@hyperdesk/contract';
import type { Db, Tx } from '../../db/client';
import { transaction } from '../../db/after-commit';
import { courses, machines, orders, users } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { BadRequest, Conflict, NotFound } from '../../errors';
import type { Principal } from '../identity/tokens';
import { revokeUserSessions } from '../identity/sessions';
import { auditSecondFactorReset, resetSecondFactor } from '../identity/two-factor';
import { adjust, type Ledger } from '../ledger/service';
import type { Machines } from '../machines/service';
import { audienceOf, type Events } from '../machines/events';
import type { Fulfilment } from '../billing/fulfilment';
import { recordAudit } from './audit';
import { adminUserById } from './users';
import { adminMachineById } from './fleet';
import { adminOrderById } from './lists';

export const STOPPED_BY_OPERATOR = 'The machine was stopped by an operator.';
export const ACCOUNT_DISABLED = 'The account was disabled by an operator.';

export interface AdminDeps {
  db: Db;
  clock: Clock;
  ledger: Pick<Ledger, 'remainingMinutes'>;
  machines: Pick<Machines, 'requestStart' | 'requestStop' | 'reconciler'>;
  fulfilment: Pick<Fulfilment, 'converge'>;
  events: Events;
  /** The identity module's reset mail (same link, same expiry, same outbox). */
  sendPasswordReset(email: string): Promise<boolean>;
}

/**
 * The console's actions. Each one reads the target's "before", changes it and writes its audit row in one
 * transaction (except the password reset and fulfilment, which run the owning module's own transaction first).
 * Browser input is only the target's id and the action's parameters; the actor is the verified token's caller.
 */
export function createAdmin(deps: AdminDeps) {
  const { db, clock } = deps;

  const userOr404 = async (q: Tx | Db, id: string): Promise<AdminUser> => {
    const u = await adminUserById(q, id, clock.now());
    if (!u) throw new NotFound('No such user.');
    return u;
  };
  const machineOr404 = async (q: Tx | Db, id: string): Promise<AdminMachine> => {
    const m = await adminMachineById(q, id, clock.now());
    if (!m) throw new NotFound('No such machine.');
    return m;
  };
  const tell = (machineIds: string[]) => {
    setTimeout(() => {
      void Promise.all(machineIds.map((id) => audienceOf(db, id)))
        .then((lists) => deps.events.publish(lists.flat(), { type: 'balance' }))
        .catch(() => undefined);
    }, 30);
  };
  /** A user's machines: their single machines and the machines of the courses they teach. */
  const machinesOf = async (tx: Tx, uid: string) =>
    (
      await tx
        .select({ id: machines.id })
        .from(machines)
        .leftJoin(courses, eq(courses.id, machines.courseId))
        .where(or(eq(machines.ownerUserId, uid), eq(courses.ownerUserId, uid)))
    ).map((r) => r.id);

  return {
    async setClaim(actor: Principal, uid: string, claim: AdminClaim, value: boolean): Promise<AdminUser> {
      if (uid === actor.uid && claim === 'admin' && !value) throw new Conflict('You cannot remove your own admin claim.', 'admin/self');
      return db.transaction(async (tx) => {
        const before = await userOr404(tx, uid);
        await tx.update(users).set(claim === 'admin' ? { admin: value } : { instructor: value }).where(eq(users.id, uid));
        await recordAudit(tx, actor, { action: `user.claim.${claim}.${value ? 'grant' : 'revoke'}`, targetType: 'user', targetId: uid, before: { email: before.email, [claim]: before[claim] }, after: { email: before.email, [claim]: value } }, clock.now());
        return userOr404(tx, uid);
      });
    },

    async userAction(actor: Principal, uid: string, action: UserAction): Promise<AdminUser> {
      if (uid === actor.uid && action === 'disable') throw new Conflict('You cannot disable your own account.', 'admin/self');
      if (uid === actor.uid && action === 'reset-2fa') throw new Conflict('You cannot reset your own second factor here: turn it off under Account Details.', 'admin/self');
      const now = clock.now();
      if (action === 'password-reset') {
        const before = await userOr404(db, uid);
        await deps.sendPasswordReset(before.email);
        await recordAudit(db, actor, { action: 'user.password-reset', targetType: 'user', targetId: uid, before: { email: before.email }, after: { mailed: true } }, now);
        return before;
      }
      if (action === 'reset-2fa') {
        // The CLI's reset-2fa through the console: same removal, same audit row (user.totp.reset), actor the operator.
        return db.transaction(async (tx) => {
          const before = await userOr404(tx, uid);
          const removed = await resetSecondFactor(tx, uid, now);
          if (!removed) throw new Conflict(`${before.email} has no second factor; nothing changed.`, 'admin/no-second-factor');
          await auditSecondFactorReset(tx, actor, { id: uid, email: before.email }, removed, now);
          return userOr404(tx, uid);
        });
      }
      let stopped: string[] = [];
      const after = await transaction(db, async (tx) => {
        const before = await userOr404(tx, uid);
        const summary: Record<string, unknown> = { email: before.email };
        if (action === 'disable') {
          await tx.update(users).set({ disabledAt: now }).where(and(eq(users.id, uid), isNull(users.disabledAt)));
          await revokeUserSessions(tx, uid, now);
          stopped = await machinesOf(tx, uid);
          await deps.machines.requestStop(tx, stopped, ACCOUNT_DISABLED, 'operator');
          Object.assign(summary, { disabled: true, sessionsRevoked: before.activeSessions, machinesStopped: stopped.length });
        } else if (action === 'enable') {
          await tx.update(users).set({ disabledAt: null }).where(eq(users.id, uid));
          summary.disabled = false;
        } else {
          await revokeUserSessions(tx, uid, now);
          summary.sessionsRevoked = before.activeSessions;
        }
        await recordAudit(tx, actor, { action: `user.${action}`, targetType: 'user', targetId: uid, before: { email: before.email, disabledAt: before.disabledAt, activeSessions: before.activeSessions }, after: summary }, now);
        return userOr404(tx, uid);
      });
      if (stopped.length) tell(stopped);
      return after;
    },

    async machineAction(actor: Principal, id: string, action: MachineAction): Promise<AdminMachine> {
      const now = clock.now();
      const after = await transaction(db, async (tx) => {
        await tx.execute(sql`select id from machines where id = ${id}::uuid for update`);
        const before = await machineOr404(tx, id);
        if (action === 'start') {
          if (before.minutesLeft <= 0) throw new Conflict('This machine has no hours left; add hours first.', 'admin/no-hours');
          await deps.machines.requestStart(tx, [id]);
        } else if (action === 'stop') {
          await deps.machines.requestStop(tx, [id], STOPPED_BY_OPERATOR, 'operator');
        } else {
          // Whatever the desired state was (a stop already asked for but a desktop still up): stopped, re-driven now.
          await tx.update(machines).set({ desired: 'stopped', stopReason: STOPPED_BY_OPERATOR, stoppedBy: 'operator', stoppedAt: now, updatedAt: now }).where(eq(machines.id, id));
        }
        const m = await machineOr404(tx, id);
        const pick = (x: AdminMachine) => ({ desired: x.desired, observed: x.observed, minutesLeft: x.minutesLeft, stopReason: x.stopReason, stoppedBy: x.lastStop?.by ?? null });
        await recordAudit(tx, actor, { action: `machine.${action}`, targetType: 'machine', targetId: id, before: pick(before), after: pick(m) }, now);
        return m;
      });
      deps.machines.reconciler.kick();
      tell([id]);
      return after;
    },

    /** Converges the order from the payment provider's truth through billing's own path: a fulfilled order stays as it is. */
    async refulfil(actor: Principal, orderId: string): Promise<AdminOrder> {
      const [row] = await db.select().from(orders).where(eq(orders.id, orderId));
      if (!row) throw new NotFound('No such order.');
      const before = await adminOrderById(db, orderId);
      await deps.fulfilment.converge(row);
      const after = (await adminOrderById(db, orderId))!;
      const pick = (o: AdminOrder) => ({ status: o.status, fulfilledAt: o.fulfilledAt, machineId: o.machineId, courseId: o.courseId });
      await recordAudit(db, actor, { action: 'order.fulfil', targetType: 'order', targetId: orderId, before: pick(before!), after: pick(after) }, clock.now());
      return after;
    },

    /** An `adjustment` in the ledger (ledger/audit.ts adjust), with the operator's reason, and its audit row. */
    async adjustHours(actor: Principal, body: AdjustmentBody): Promise<AdjustmentAnswer> {
      const now = clock.now();
      const answer = await db.transaction(async (tx) => {
        const before = await deps.ledger.remainingMinutes(tx, body.machineId, now);
        let result;
        try {
          result = await adjust(tx, { machineId: body.machineId, minutes: body.minutes, reason: body.reason, key: `admin:${randomUUID()}`, at: now });
        } catch (err) {
          if (err instanceof RangeError) {
            if (err.message.startsWith('no machine')) throw new NotFound('No such machine.');
            throw new BadRequest(err.message, 'admin/adjustment');
          }
          throw err;
        }
        await recordAudit(tx, actor, { action: 'hours.adjust', targetType: 'machine', targetId: body.machineId, before: { minutesLeft: before }, after: { minutesLeft: result.remainingMinutes, minutes: body.minutes, reason: body.reason } }, now);
        return { machineId: body.machineId, minutesLeft: result.remainingMinutes };
      });
      tell([body.machineId]);
      return answer;
    },

    /** The console itself: a token's admin claim is not enough once the account lost it or was disabled. */
    async stillAdmin(uid: string): Promise<boolean> {
      const [row] = await db.select({ admin: users.admin, disabledAt: users.disabledAt }).from(users).where(eq(users.id, uid));
      return !!row?.admin && !row.disabledAt;
    },
  };
}

export type Admin = ReturnType<typeof createAdmin>;
