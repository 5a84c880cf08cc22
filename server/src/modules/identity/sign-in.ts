import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import { AUTH_MESSAGES, TWO_FACTOR_MESSAGES, type Session } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import { signInChallenges } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { HttpError, TooMany } from '../../errors';
import { recordAudit } from '../admin/audit';
import { ID_TOKEN_TTL_SECONDS, type Tokens } from './tokens';
import { createSession, sha256 } from './sessions';
import { findUserById, toPrincipal, toUser, type UserRow } from './users';
import { auditOwnSecondFactor, hasTotp, useSecondFactor, type FactorUsed } from './two-factor';

/**
 * The one place every sign-in ends (issue 23.2): a password login, an SSO callback, or the code step after either.
 * An account with a second factor gets a short-lived, single-use challenge instead of a session; the session comes
 * from finishWithCode once the challenge and a TOTP or recovery code check out. Sign-ins of admins are audited.
 */

/** What a sign-in answers: the Session body, and the refresh cookie to set (null: keep the current one). */
export interface SignedIn {
  session: Session;
  cookie: string | null;
}

/** How the first factor was proven: a password, or the school's identity provider (RFC 8176 amr values). */
export type SignInMethod = 'pwd' | 'sso';

/** Where a sign-in came from, for the audit log of admin sign-ins. */
export interface SignInFrom {
  ip: string;
  userAgent: string;
}

/** The request's client address (TRUST_PROXY applied) and user agent. */
export const signInFrom = (req: FastifyRequest): SignInFrom => ({ ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '').slice(0, 300) });

export type SignInOutcome =
  | { kind: 'session'; signedIn: SignedIn }
  /** Send the user to the code step: `/?login=1&mfa=<challenge>` (SSO) or the login answer's challenge. */
  | { kind: 'challenge'; challenge: string; expiresIn: number };

/** What completeSignIn needs; the module context (ctx) has all three. */
export interface SignInDeps {
  db: Db;
  clock: Clock;
  tokens: Tokens;
}

export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Wrong codes one challenge takes before it is spent. */
export const CHALLENGE_ATTEMPTS = 5;
/** Wrong codes an account takes over all its challenges of the last 15 minutes before codes are refused. */
export const ACCOUNT_CODE_FAILURES = { limit: 10, windowMs: 15 * 60_000 };

const failed = (status: number, code: keyof typeof TWO_FACTOR_MESSAGES) => new HttpError(status, TWO_FACTOR_MESSAGES[code], code);
const loginFailed = () => new HttpError(401, AUTH_MESSAGES['auth/login-failed'], 'auth/login-failed');

/** A Session answer for a user signed in with `amr` (the id token says how: amr and mfa claims). */
export async function sessionAnswer(tokens: Tokens, row: UserRow, amr: readonly string[], cookie: string | null): Promise<SignedIn> {
  return { session: { user: toUser(row), accessToken: await tokens.sign(toPrincipal(row, amr)), expiresIn: ID_TOKEN_TTL_SECONDS }, cookie };
}

/**
 * Finishes a sign-in whose first factor was checked by the caller (the password, or the provider's id token):
 * refuses a disabled account, then either issues the session (audited for an admin) or, when the account has a
 * second factor, a challenge for the code step.
 */
export async function completeSignIn(deps: SignInDeps, user: UserRow, o: { method: SignInMethod } & SignInFrom): Promise<SignInOutcome> {
  if (user.disabledAt) throw loginFailed();
  const now = deps.clock.now();
  if (await hasTotp(deps.db, user.id)) {
    const challenge = randomBytes(32).toString('base64url');
    await deps.db.insert(signInChallenges).values({
      idHash: sha256(challenge),
      userId: user.id,
      method: o.method,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
    });
    return { kind: 'challenge', challenge, expiresIn: CHALLENGE_TTL_MS / 1000 };
  }
  return { kind: 'session', signedIn: await issue(deps, user, [o.method], o) };
}

/**
 * The code step: the challenge is claimed (used_at set) while its code is checked, so it serves one request at a
 * time; a wrong code gives it back with one attempt fewer. The session's amr is the challenge's method plus 'otp'.
 */
export async function finishWithCode(deps: SignInDeps, challenge: string, code: string, from: SignInFrom): Promise<SignedIn> {
  const { db } = deps;
  const now = deps.clock.now();
  const idHash = sha256(challenge);
  const [claimed] = await db
    .update(signInChallenges)
    .set({ usedAt: now })
    .where(and(eq(signInChallenges.idHash, idHash), isNull(signInChallenges.usedAt), gt(signInChallenges.expiresAt, now), lt(signInChallenges.attempts, CHALLENGE_ATTEMPTS)))
    .returning();
  if (!claimed) throw failed(401, 'auth/mfa-expired');
  const user = await findUserById(db, claimed.userId);
  if (!user || user.disabledAt) throw failed(401, 'auth/mfa-expired');
  if ((await recentFailures(db, user.id, now)) >= ACCOUNT_CODE_FAILURES.limit) {
    await db.update(signInChallenges).set({ usedAt: null }).where(eq(signInChallenges.idHash, idHash));
    throw new TooMany('Too many wrong codes. Please try again in 15 minutes.', 'rate-limited');
  }
  // A recovery code spent is in the audit log for every user (who, when, from where), with the codes left.
  const used: FactorUsed | null = await useSecondFactor(db, user.id, code, now, (tx, left) =>
    auditOwnSecondFactor(tx, user, 'user.totp.recovery-code.use', { before: { recoveryCodesLeft: left + 1 }, after: { recoveryCodesLeft: left, during: 'sign-in', method: claimed.method } }, from, now),
  );
  if (!used) {
    await db.update(signInChallenges).set({ usedAt: null, attempts: sql`${signInChallenges.attempts} + 1` }).where(eq(signInChallenges.idHash, idHash));
    if (user.admin) await auditSignIn(db, user, 'auth.sign-in.failed', { ...from, method: claimed.method, reason: 'wrong code' }, now);
    throw failed(401, 'auth/mfa-failed');
  }
  return issue(deps, user, [claimed.method, 'otp'], from, used);
}

/** A failed first factor of an admin account (wrong password), for the audit log; others are not recorded. */
export async function recordFailedAdminSignIn(deps: SignInDeps, user: UserRow, o: { method: SignInMethod; reason: string } & SignInFrom): Promise<void> {
  if (user.admin) await auditSignIn(deps.db, user, 'auth.sign-in.failed', o, deps.clock.now());
}

async function issue(deps: SignInDeps, user: UserRow, amr: string[], from: SignInFrom, factor?: FactorUsed): Promise<SignedIn> {
  const now = deps.clock.now();
  const issued = await deps.db.transaction(async (tx) => {
    const s = await createSession(tx, user.id, now, amr);
    if (user.admin) {
      await recordAudit(tx, { uid: user.id, email: user.email, name: user.displayName, instructor: user.instructor, admin: true, emailVerified: !!user.emailVerifiedAt }, {
        action: 'auth.sign-in',
        targetType: 'user',
        targetId: user.id,
        after: { ip: from.ip, userAgent: from.userAgent, amr, ...(factor ? { factor } : {}) },
      }, now);
    }
    return s;
  });
  return sessionAnswer(deps.tokens, user, amr, issued.cookie);
}

async function recentFailures(db: Db, userId: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - ACCOUNT_CODE_FAILURES.windowMs);
  const [row] = await db
    .select({ n: sql<number>`coalesce(sum(${signInChallenges.attempts}), 0)::int` })
    .from(signInChallenges)
    .where(and(eq(signInChallenges.userId, userId), gt(signInChallenges.createdAt, since)));
  return row?.n ?? 0;
}

async function auditSignIn(db: Db, user: UserRow, action: string, detail: SignInFrom & { method: string; reason: string }, now: Date): Promise<void> {
  const actor = { uid: user.id, email: user.email, name: user.displayName, instructor: user.instructor, admin: user.admin, emailVerified: !!user.emailVerifiedAt };
  await recordAudit(db, actor, { action, targetType: 'user', targetId: user.id, after: detail }, now);
}
