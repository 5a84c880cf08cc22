import { randomBytes } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import { AUTH_MESSAGES, MIN_PASSWORD, type User } from '@hyperdesk/contract';
import type { Db, Tx } from '../../db/client';
import { passwordResets, users } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { BadRequest, HttpError, Unauthorized } from '../../errors';
import type { Captcha } from '../captcha/service';
import type { Mailer } from '../mail/service';
import type { Principal, Tokens } from './tokens';
import { completeSignIn, recordFailedAdminSignIn, sessionAnswer, type SignedIn, type SignInFrom, type SignInOutcome } from './sign-in';
import { dummyVerify, hashPassword, primeDummyHash, verifyPassword } from './passwords';
import { createSession, revokeByCookie, revokeUserSessions, sha256, useSession } from './sessions';
import { findUserByEmail, findUserById, insertUser, isValidEmail, normalizeEmail, toUser, type UserRow } from './users';
import { resetMail } from './mails';
import { createVerification, markVerified } from './verification';

export type AuthCode = keyof typeof AUTH_MESSAGES;
export const RESET_TTL_MS = 60 * 60_000;

/** An identity failure with its contract code; the web shows AUTH_MESSAGES[code] (spec §5, §8). */
export const authError = (status: number, code: AuthCode) => new HttpError(status, AUTH_MESSAGES[code], code);

export type { SignedIn } from './sign-in';

export interface SignupInput {
  name: string;
  email: string;
  password: string;
  confirmPassword: string;
  captcha?: string;
}

export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
  confirmPassword: string;
}

export function createIdentity(deps: { db: Db; clock: Clock; tokens: Tokens; mailer: Mailer; captcha: Captcha; publicUrl: string }) {
  const { db, clock, tokens, mailer, captcha } = deps;
  const verification = createVerification(deps);
  void primeDummyHash();

  const answer = (row: UserRow, cookie: string | null, amr: readonly string[] = ['pwd']): Promise<SignedIn> => sessionAnswer(tokens, row, amr, cookie);

  const userOf = async (p: Principal): Promise<UserRow> => {
    const row = await findUserById(db, p.uid);
    if (!row) throw authError(401, 'auth/session-expired');
    return row;
  };

  return {
    /** Checks in the order the sign-up popup reports them (spec §5, §8). */
    async signup(input: SignupInput): Promise<SignedIn> {
      const name = input.name.trim();
      const email = normalizeEmail(input.email);
      if (!name || !email || !input.password.trim() || !input.confirmPassword.trim()) throw authError(400, 'auth/fields-required');
      if (input.password !== input.confirmPassword) throw authError(400, 'auth/password-mismatch');
      if (!(await captcha.verify(input.captcha))) throw authError(400, 'auth/captcha-required');
      if (!isValidEmail(email)) throw authError(400, 'auth/invalid-email');
      if (input.password.length < MIN_PASSWORD) throw authError(400, 'auth/weak-password');
      if (await findUserByEmail(db, email)) throw authError(409, 'auth/email-already-in-use');
      const now = clock.now();
      const created = await db.transaction(async (tx) => {
        const row = await insertUser(tx, { email, displayName: name, password: input.password, now });
        if (!row) return null;
        await verification.mailNewUser(tx, row, now);
        return { row, issued: await createSession(tx, row.id, now) };
      });
      if (!created) throw authError(409, 'auth/email-already-in-use');
      return answer(created.row, created.issued.cookie);
    },

    /**
     * Every failure answers the same, after the same amount of hashing work. A right password ends in
     * completeSignIn (sign-in.ts): a session, or a challenge for the code step when the account has a second factor;
     * a disabled account answers like a failed login there (checked after the password: no probing).
     */
    async login(input: { email: string; password: string }, from: SignInFrom): Promise<SignInOutcome> {
      const row = await findUserByEmail(db, input.email);
      const ok = row ? await verifyPassword(input.password, row.passwordHash) : await dummyVerify(input.password);
      if (row && !ok) await recordFailedAdminSignIn(deps, row, { ...from, method: 'pwd', reason: 'wrong password' });
      if (!row || !ok) throw authError(401, 'auth/login-failed');
      return completeSignIn(deps, row, { ...from, method: 'pwd' });
    },

    /** A fresh id token whose claims come from the database (an operator's grant shows up here). */
    async refresh(cookie: string | undefined): Promise<SignedIn> {
      const outcome = await useSession(db, cookie, clock.now());
      if (!outcome.ok) throw authError(401, 'auth/session-expired');
      const row = await findUserById(db, outcome.userId);
      if (!row || row.disabledAt) throw authError(401, 'auth/session-expired');
      return answer(row, outcome.cookie, outcome.amr);
    },

    async logout(cookie: string | undefined): Promise<void> {
      await revokeByCookie(db, cookie, clock.now());
    },

    /**
     * Stores a single-use reset token (hash only) and its e-mail in one transaction. Answers whether a mail was
     * queued; the route answers the same either way, so nobody learns which e-mails have accounts.
     */
    async forgot(emailInput: string): Promise<boolean> {
      const email = normalizeEmail(emailInput);
      if (!email) throw new BadRequest('Please enter your email.', 'auth/email-required');
      if (!isValidEmail(email)) throw authError(400, 'auth/invalid-email');
      const row = await findUserByEmail(db, email);
      if (!row) return false;
      const token = randomBytes(32).toString('base64url');
      const now = clock.now();
      const link = `${deps.publicUrl}/reset-password?token=${token}`;
      await db.transaction(async (tx) => {
        await tx.insert(passwordResets).values({ tokenHash: sha256(token), userId: row.id, expiresAt: new Date(now.getTime() + RESET_TTL_MS) });
        await mailer.enqueue(tx, resetMail(row, link));
      });
      return true;
    },

    /** Uses a reset link once: sets the password, spends every other open link and signs out every session. */
    async reset(input: { token: string; password: string }): Promise<void> {
      if (input.password.length < MIN_PASSWORD || !input.password.trim()) throw authError(400, 'auth/weak-password');
      const passwordHash = await hashPassword(input.password);
      const now = clock.now();
      const done = await db.transaction(async (tx) => {
        const [used] = await tx
          .update(passwordResets)
          .set({ usedAt: now })
          .where(and(eq(passwordResets.tokenHash, sha256(input.token)), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)))
          .returning({ userId: passwordResets.userId });
        if (!used) return false;
        await setPassword(tx, used.userId, passwordHash, now);
        await revokeUserSessions(tx, used.userId, now);
        // The reset link came through the mailbox: the address is proven (and a squatter's sessions are gone).
        await markVerified(tx, used.userId, now);
        return true;
      });
      if (!done) throw authError(400, 'auth/reset-failed');
    },

    /** Re-authenticates with the current password; on success every session is replaced by one new one. */
    async changePassword(p: Principal, input: ChangePasswordInput): Promise<SignedIn> {
      const { currentPassword: current, newPassword: next, confirmPassword: confirm } = input;
      if (!current.trim() || !next.trim() || !confirm.trim()) throw authError(400, 'auth/change-fields-required');
      if (next !== confirm) throw authError(400, 'auth/new-password-mismatch');
      if (next.trim() === current.trim()) throw authError(400, 'auth/same-password');
      const row = await userOf(p);
      if (!(await verifyPassword(current, row.passwordHash))) throw authError(400, 'auth/password-change-failed');
      if (next.length < MIN_PASSWORD) throw authError(400, 'auth/weak-password');
      const passwordHash = await hashPassword(next);
      const now = clock.now();
      // The new session keeps how the caller signed in (a second factor stays proven).
      const amr = p.amr?.length ? p.amr : ['pwd'];
      const issued = await db.transaction(async (tx) => {
        await setPassword(tx, row.id, passwordHash, now);
        await revokeUserSessions(tx, row.id, now);
        return createSession(tx, row.id, now, amr);
      });
      return answer({ ...row, passwordHash, passwordMustChange: false }, issued.cookie, amr);
    },

    async me(p: Principal): Promise<User> {
      return toUser(await userOf(p));
    },

    verifyEmail: verification.consume,
    resendVerification: (p: Principal) => verification.resend(p),
    verificationStatus: verification.status,

    async updateProfile(p: Principal, displayName: string): Promise<User> {
      const [row] = await db.update(users).set({ displayName: displayName.trim() }).where(eq(users.id, p.uid)).returning();
      if (!row) throw new Unauthorized(AUTH_MESSAGES['auth/session-expired'], 'auth/session-expired');
      return toUser(row);
    },
  };
}

export type Identity = ReturnType<typeof createIdentity>;

/** New password hash (a generated first-admin password no longer needs changing); open reset links of the user are spent too (a link mailed before the change must not work). */
async function setPassword(tx: Tx, userId: string, passwordHash: string, now: Date) {
  await tx.update(users).set({ passwordHash, passwordChangedAt: now, passwordMustChange: false }).where(eq(users.id, userId));
  await tx.update(passwordResets).set({ usedAt: now }).where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
}
