/**
 * E-mail verification (issue 11): roster access and STUDENT entries key on the e-mail, so the address must be
 * proven by a single-use link mailed to it. Only the token's hash is stored. A link is bound either to one account
 * (sign-up and resend) or, when mailed with a course invitation, to the address alone: it verifies whichever
 * account holds that address when it is opened. Either way the opener must be signed in to that account.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { VERIFY_MESSAGES, type EmailVerification } from '@hyperdesk/contract';
import type { Db, Queryable } from '../../db/client';
import { emailVerifications, users } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { HttpError } from '../../errors';
import type { Mailer } from '../mail/service';
import { verificationMail } from './mails';
import { sha256 } from './sessions';
import { findUserById, normalizeEmail } from './users';
import type { Principal } from './tokens';

export const VERIFY_TTL_MS = 24 * 60 * 60_000;
/** Invitations are often sent days before a course starts. */
export const INVITE_VERIFY_TTL_MS = 14 * 24 * 60 * 60_000;

export type VerifyCode = keyof typeof VERIFY_MESSAGES;
const verifyError = (status: number, code: VerifyCode) => new HttpError(status, VERIFY_MESSAGES[code], code);

/** Stores a new link's hash (use the caller's transaction, with the mail that carries it) and answers the link. */
export async function issueVerificationLink(
  q: Queryable,
  o: { email: string; userId: string | null; now: Date; publicUrl: string; ttlMs?: number },
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await q.insert(emailVerifications).values({
    tokenHash: sha256(token),
    email: normalizeEmail(o.email),
    userId: o.userId,
    createdAt: o.now,
    expiresAt: new Date(o.now.getTime() + (o.ttlMs ?? VERIFY_TTL_MS)),
  });
  return `${o.publicUrl}/verify-email?token=${token}`;
}

/** Marks the address proven (a password reset proves it too); keeps the first proof's time. */
export async function markVerified(q: Queryable, userId: string, now: Date): Promise<void> {
  await q.update(users).set({ emailVerifiedAt: now }).where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)));
}

export function createVerification(deps: { db: Db; clock: Clock; mailer: Mailer; publicUrl: string }) {
  const { db, clock, mailer } = deps;

  /** The sign-up mail; call inside the sign-up transaction. */
  const mailNewUser = async (q: Queryable, user: { id: string; email: string; displayName: string }, now: Date): Promise<void> => {
    const link = await issueVerificationLink(q, { email: user.email, userId: user.id, now, publicUrl: deps.publicUrl });
    await mailer.enqueue(q, verificationMail(user, link));
  };

  return {
    mailNewUser,

    /**
     * Spends a link once and verifies its account, for a caller signed in to that account. A link that fails for a
     * reason the opener can fix (no account yet, not signed in, signed in as someone else) is not spent: the
     * transaction rolls back.
     */
    async consume(token: string, caller: Principal | null): Promise<{ email: string }> {
      const now = clock.now();
      return db.transaction(async (tx) => {
        const [link] = await tx
          .update(emailVerifications)
          .set({ usedAt: now })
          .where(and(eq(emailVerifications.tokenHash, sha256(token)), isNull(emailVerifications.usedAt), gt(emailVerifications.expiresAt, now)))
          .returning();
        if (!link) throw verifyError(400, 'verify/link-invalid');
        const [user] = await tx.select().from(users).where(eq(users.email, link.email));
        // An account link whose account is gone (or whose address changed hands) verifies nobody.
        if (link.userId && user?.id !== link.userId) throw verifyError(400, 'verify/link-invalid');
        if (!user) throw verifyError(404, 'verify/no-account');
        // The opener must be signed in to the account: otherwise whoever squatted a student's address could have
        // the real student verify it for them by opening the invitation (or an unexpected sign-up mail). The real
        // owner of a squatted address takes the account over with "Forgot password" (that proves the address too).
        if (!caller) throw verifyError(401, 'verify/login-required');
        if (caller.uid !== user.id) throw verifyError(403, 'verify/other-account');
        await markVerified(tx, user.id, now);
        // The address is proven: other open links for it (earlier mails, invitations) have nothing left to do.
        await tx.update(emailVerifications).set({ usedAt: now }).where(and(eq(emailVerifications.email, user.email), isNull(emailVerifications.usedAt)));
        return { email: user.email };
      });
    },

    /** Mails a fresh link unless the address is proven already; answers whether a mail was queued. */
    async resend(p: Principal): Promise<boolean> {
      const user = await findUserById(db, p.uid);
      if (!user || user.emailVerifiedAt) return false;
      await db.transaction(async (tx) => mailNewUser(tx, user, clock.now()));
      return true;
    },

    /** Read from the database (not the token), so the dashboard sees a verification at once. */
    async status(p: Principal): Promise<EmailVerification> {
      const user = await findUserById(db, p.uid);
      const verified = !!user?.emailVerifiedAt;
      if (!user || verified) return { emailVerified: verified, rosterCourses: 0 };
      // Running courses whose roster has the address (the courses module's tables, read-only here).
      const rows = await db.execute(sql`
        select count(*)::int as n from roster r join courses c on c.id = r.course_id
        where r.email = ${user.email} and c.end_at > ${clock.now().toISOString()}::timestamptz and c.owner_user_id <> ${user.id}::uuid`);
      return { emailVerified: false, rosterCourses: Number((rows.rows[0] as { n: number } | undefined)?.n ?? 0) };
    },
  };
}

export type Verification = ReturnType<typeof createVerification>;
