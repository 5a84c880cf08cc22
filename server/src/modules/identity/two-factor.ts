import { and, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { TotpSetup, TwoFactorStatus } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { recoveryCodes, userTotp } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { hashRecoveryCode, looksLikeRecoveryCode, matchStep, newRecoveryCodes, newTotpSecret, openSecret, otpauthUrl, qrSvg, sealSecret } from './totp';
import type { UserRow } from './users';

/** Which second factor a code proved: a TOTP code or one recovery code (now spent). */
export type FactorUsed = 'totp' | 'recovery';

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
export async function useSecondFactor(db: Db, userId: string, code: string, now: Date): Promise<FactorUsed | null> {
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
  const spent = await db
    .update(recoveryCodes)
    .set({ usedAt: now })
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, hashRecoveryCode(code)), isNull(recoveryCodes.usedAt)))
    .returning({ id: recoveryCodes.userId });
  return spent.length ? 'recovery' : null;
}

/** Enrolment and its state for the Profile page (the routes check passwords and rate limits). */
export function createTwoFactor(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    async status(user: UserRow): Promise<TwoFactorStatus> {
      const enabled = await hasTotp(db, user.id);
      const [left] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(recoveryCodes)
        .where(and(eq(recoveryCodes.userId, user.id), isNull(recoveryCodes.usedAt)));
      return { enabled, recoveryCodesLeft: enabled ? (left?.n ?? 0) : 0, required: user.admin, passwordMustChange: user.passwordMustChange };
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
     * ones (their plain text is returned once, only hashes are kept). Null when the code does not match.
     */
    async confirm(user: UserRow, code: string): Promise<string[] | null> {
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
        if (!on) return false;
        await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, user.id));
        await tx.insert(recoveryCodes).values(codes.map((c) => ({ userId: user.id, codeHash: hashRecoveryCode(c) })));
        return true;
      });
      return done ? codes : null;
    },

    /** Removes the authenticator and the recovery codes (the route checked the password and a code first). */
    async disable(userId: string): Promise<void> {
      await db.transaction(async (tx) => {
        await tx.delete(userTotp).where(eq(userTotp.userId, userId));
        await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
      });
    },

  };
}

export type TwoFactor = ReturnType<typeof createTwoFactor>;
