import { and, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { TotpSetup, TwoFactorStatus } from '@hyperdesk/contract';
import type { Db, Queryable, Tx } from '../../db/client';
import { recoveryCodes, users, userTotp } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { recordAudit, type Actor } from '../admin/audit';
import { revokeUserSessions } from './sessions';
import type { SignInFrom } from './sign-in';
import { hashRecoveryCode, looksLikeRecoveryCode, matchStep, newRecoveryCodes, newTotpSecret, openSecret, otpauthUrl, qrSvg, sealSecret } from './totp';
import type { UserRow } from './users';

/** Which second factor a code proved: a TOTP code or one recovery code (now spent). */
export type FactorUsed = 'totp' | 'recovery';

/**
 * The audit row of a change to a user's own second factor (turned on, turned off, a recovery code spent), written
 * for every user, not only operators: the actor is the account itself (kind 'account'), `after` says where the
 * request came from (as admin sign-ins' rows do).
 * Actions start with `user.totp.`, so the Audit page's action filter `user.totp` lists them with operators' resets.
 */
export async function auditOwnSecondFactor(
  q: Queryable,
  user: UserRow,
  action: 'user.totp.enable' | 'user.totp.disable' | 'user.totp.recovery-code.use',
  change: { before: Record<string, unknown>; after: Record<string, unknown> },
  from: SignInFrom,
  now: Date,
): Promise<void> {
  await recordAudit(q, { kind: 'account', uid: user.id, email: user.email }, {
    action,
    targetType: 'user',
    targetId: user.id,
    before: { email: user.email, ...change.before },
    after: { email: user.email, ...change.after, ip: from.ip, userAgent: from.userAgent },
  }, now);
}

/** Recovery codes not yet used. */
export async function recoveryCodesLeft(q: Queryable, userId: string): Promise<number> {
  const [left] = await q
    .select({ n: sql<number>`count(*)::int` })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt)));
  return Number(left?.n ?? 0);
}

/** Whether the user has a confirmed authenticator (the console requires one of its admins). */
export async function hasTotp(q: Queryable, userId: string): Promise<boolean> {
  const [row] = await q.select({ id: userTotp.userId }).from(userTotp).where(and(eq(userTotp.userId, userId), isNotNull(userTotp.confirmedAt)));
  return !!row;
}

/**
 * Checks a code against the user's confirmed authenticator, or spends one of their recovery codes. Each check is one
 * conditional UPDATE, so two requests with the same code cannot both pass: a TOTP code moves last_step forward (a
 * step at or before it never passes again), a recovery code gets used_at.
 */
export async function useSecondFactor(
  db: Db,
  userId: string,
  code: string,
  now: Date,
  /** Runs in the transaction that spends a recovery code (its audit row), with the codes left after it. */
  onRecoveryCode?: (tx: Tx, left: number) => Promise<void>,
): Promise<FactorUsed | null> {
  const [row] = await db.select().from(userTotp).where(and(eq(userTotp.userId, userId), isNotNull(userTotp.confirmedAt)));
  if (!row) return null;
  const step = matchStep(await openSecret(db, userId, row.secretEnc), code, now);
  if (step !== null) {
    const moved = await db
      .update(userTotp)
      .set({ lastStep: step })
      .where(and(eq(userTotp.userId, userId), or(isNull(userTotp.lastStep), lt(userTotp.lastStep, step))))
      .returning({ id: userTotp.userId });
    return moved.length ? 'totp' : null;
  }
  if (!looksLikeRecoveryCode(code)) return null;
  return db.transaction(async (tx) => {
    const spent = await tx
      .update(recoveryCodes)
      .set({ usedAt: now })
      .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, hashRecoveryCode(code)), isNull(recoveryCodes.usedAt)))
      .returning({ id: recoveryCodes.userId });
    if (!spent.length) return null;
    if (onRecoveryCode) await onRecoveryCode(tx, await recoveryCodesLeft(tx, userId));
    return 'recovery' as const;
  });
}

/** What a user's second factor was before an operator's reset. */
export interface SecondFactorRemoved {
  /** A confirmed authenticator was removed. */
  totp: boolean;
  /** An enrolment not yet confirmed (a QR code scanned, no code entered) was removed. */
  enrolmentPending: boolean;
  /** Unused recovery codes removed. */
  recoveryCodesLeft: number;
  /** Refresh sessions (not yet expired) ended. */
  sessionsEnded: number;
}

/**
 * An operator's reset of a user's second factor (a lost phone; the CLI's `reset-2fa` and the console's Users
 * section): removes the authenticator, an enrolment in progress and every recovery code, and ends the user's refresh
 * sessions, so a stolen session cannot enrol an authenticator of its own. Call it in the transaction that writes the
 * audit row. Null (and nothing done) when the user had none of them. An id token already issued stays valid until
 * it expires (15 minutes) for the rest of the API, but not to enrol (second_factor_reset_at), and the console's guard
 * reads the authenticator from the database: an admin so reset must sign in and enrol again before it opens.
 */
export async function resetSecondFactor(tx: Tx, userId: string, now: Date): Promise<SecondFactorRemoved | null> {
  const totp = await tx.delete(userTotp).where(eq(userTotp.userId, userId)).returning({ confirmedAt: userTotp.confirmedAt });
  const codes = await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).returning({ usedAt: recoveryCodes.usedAt });
  if (!totp.length && !codes.length) return null;
  // Enrolling again needs an id token signed after this (./two-factor-routes): one taken before cannot.
  await tx.update(users).set({ secondFactorResetAt: now }).where(eq(users.id, userId));
  return {
    totp: totp.some((t) => t.confirmedAt !== null),
    enrolmentPending: totp.some((t) => t.confirmedAt === null),
    recoveryCodesLeft: codes.filter((c) => c.usedAt === null).length,
    sessionsEnded: await revokeUserSessions(tx, userId, now),
  };
}

/** The audit row of an operator's reset (console or CLI): `user.totp.reset`, what was removed before and after. */
export async function auditSecondFactorReset(q: Queryable, actor: Actor, target: { id: string; email: string }, removed: SecondFactorRemoved, now: Date): Promise<void> {
  await recordAudit(q, actor, {
    action: 'user.totp.reset',
    targetType: 'user',
    targetId: target.id,
    before: { email: target.email, totp: removed.totp, enrolmentPending: removed.enrolmentPending, recoveryCodesLeft: removed.recoveryCodesLeft },
    after: { email: target.email, totp: false, recoveryCodesLeft: 0, sessionsEnded: removed.sessionsEnded },
  }, now);
}

/** Enrolment and its state for the Profile page (the routes check passwords and rate limits). */
export function createTwoFactor(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    async status(user: UserRow): Promise<TwoFactorStatus> {
      const enabled = await hasTotp(db, user.id);
      return { enabled, recoveryCodesLeft: enabled ? await recoveryCodesLeft(db, user.id) : 0, required: user.admin, passwordMustChange: user.passwordMustChange };
    },

    /** A new secret waiting for its first code (replaces an unconfirmed one); null when a confirmed one exists. */
    async begin(user: UserRow): Promise<TotpSetup | null> {
      if (await hasTotp(db, user.id)) return null;
      const secret = newTotpSecret();
      const secretEnc = await sealSecret(db, user.id, secret);
      await db
        .insert(userTotp)
        .values({ userId: user.id, secretEnc, createdAt: clock.now() })
        .onConflictDoUpdate({ target: userTotp.userId, set: { secretEnc, createdAt: clock.now(), lastStep: null }, where: isNull(userTotp.confirmedAt) });
      const url = otpauthUrl(secret, user.email);
      return { secret, otpauthUrl: url, qrSvg: await qrSvg(url) };
    },

    /**
     * The first code confirms the enrolment: the authenticator is on and ten new recovery codes replace any old
     * ones (their plain text is returned once, only hashes are kept). Null when the code does not match. `then`
     * runs in the same transaction (the caller's sessions and audit row), and its answer comes back with the codes.
     */
    async confirm<T>(user: UserRow, code: string, then: (tx: Tx) => Promise<T>): Promise<{ codes: string[]; then: T } | null> {
      const now = clock.now();
      const [row] = await db.select().from(userTotp).where(and(eq(userTotp.userId, user.id), isNull(userTotp.confirmedAt)));
      if (!row) return null;
      const step = matchStep(await openSecret(db, user.id, row.secretEnc), code, now);
      if (step === null) return null;
      const codes = newRecoveryCodes();
      const done = await db.transaction(async (tx) => {
        const [on] = await tx
          .update(userTotp)
          .set({ confirmedAt: now, lastStep: step })
          .where(and(eq(userTotp.userId, user.id), isNull(userTotp.confirmedAt), eq(userTotp.secretEnc, row.secretEnc)))
          .returning({ id: userTotp.userId });
        if (!on) return null;
        await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id));
        await tx.insert(recoveryCodes).values(codes.map((c) => ({ userId: user.id, codeHash: hashRecoveryCode(c) })));
        return { then: await then(tx) };
      });
      return done ? { codes, then: done.then } : null;
    },

    /**
     * Removes the authenticator and the recovery codes (the route checked the password and a code first); `then`
     * runs in the same transaction with the number of unused recovery codes removed (the audit row).
     */
    async disable(userId: string, then: (tx: Tx, recoveryCodesRemoved: number) => Promise<void>): Promise<void> {
      await db.transaction(async (tx) => {
        await tx.delete(userTotp).where(eq(userTotp.userId, userId));
        const removed = await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).returning({ usedAt: recoveryCodes.usedAt });
        await then(tx, removed.filter((r) => r.usedAt === null).length);
      });
    },

  };
}

export type TwoFactor = ReturnType<typeof createTwoFactor>;
