import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { MfaBody, Ok, Session, TotpConfirmBody, TotpDisableBody, TotpEnabled, TotpSetup, TWO_FACTOR_MESSAGES, TwoFactorStatus, type TwoFactorCode } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { HttpError } from '../../errors';
import type { Principal } from '../../lib/principal';
import type { Limiter } from './ratelimit';
import { createSession, revokeUserSessions } from './sessions';
import { finishWithCode, sessionAnswer, signInFrom, type SignedIn } from './sign-in';
import { auditOwnSecondFactor, createTwoFactor, useSecondFactor } from './two-factor';
import { RECOVERY_CODE_COUNT } from './totp';
import { findUserById, type UserRow } from './users';
import { verifyPassword } from './passwords';

/** What identityRoutes lends these routes: its answer with cookies, and its rate limiting. */
export interface RouteKit {
  send(reply: FastifyReply, s: SignedIn, status?: number): FastifyReply;
  setSession(reply: FastifyReply, s: SignedIn): void;
  take(reply: FastifyReply, limiter: Limiter, key: string): Promise<void>;
  refuseIfBlocked(reply: FastifyReply, limiter: Limiter, key: string): Promise<void>;
  limit: Record<'mfaPerIp' | 'totpFailuresPerUser', Limiter>;
}

const refused = (status: number, code: TwoFactorCode) => new HttpError(status, TWO_FACTOR_MESSAGES[code], code);

/**
 * Two-factor sign-in (issue 23.2): the code step of a sign-in (POST /auth/mfa), and a user's own authenticator on
 * the Profile page: status, setup (QR code and secret, shown once), confirm (ten recovery codes, shown once) and
 * disable (password and a code).
 */
export async function twoFactorRoutes(app: FastifyInstance, ctx: Ctx, kit: RouteKit): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const twoFactor = createTwoFactor({ db: ctx.db, clock: ctx.clock });
  const userOf = async (p: Principal): Promise<UserRow> => {
    const row = await findUserById(ctx.db, p.uid);
    if (!row || row.disabledAt) throw new HttpError(401, 'Your session has expired. Please log in again.', 'auth/session-expired');
    return row;
  };
  /**
   * The user, to enrol an authenticator: not with an id token signed before an operator's last reset of their
   * second factor (a stolen token, still valid for up to 15 minutes, must not enrol the thief's authenticator).
   */
  const enrollerOf = async (p: Principal): Promise<UserRow> => {
    const row = await userOf(p);
    const resetAt = row.secondFactorResetAt?.getTime();
    if (resetAt !== undefined && (p.issuedAt === undefined || p.issuedAt * 1000 < resetAt)) {
      throw new HttpError(401, 'Your session has expired. Please log in again.', 'auth/session-expired');
    }
    return row;
  };
  /** Counts a wrong code against the user (10 per 15 minutes), refusing once they are over. */
  const wrongCode = async (uid: string): Promise<never> => {
    await kit.limit.totpFailuresPerUser.hit(uid);
    throw refused(400, 'totp/code-failed');
  };

  r.post('/auth/mfa', { schema: { tags: ['auth'], summary: 'The code step of a sign-in: a challenge and a TOTP or recovery code', body: MfaBody, response: { 200: Session } } }, async (req, reply) => {
    await kit.take(reply, kit.limit.mfaPerIp, req.ip);
    return kit.send(reply, await finishWithCode(ctx, req.body.challenge, req.body.code, signInFrom(req)));
  });

  r.get('/user/totp', { preHandler: app.authenticate, schema: { tags: ['user'], summary: 'Whether two-factor sign-in is on', response: { 200: TwoFactorStatus } } }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return twoFactor.status(await userOf(principalOf(req)));
  });

  r.post('/user/totp/setup', { preHandler: app.authenticate, schema: { tags: ['user'], summary: 'A new authenticator secret and its QR code (shown once)', response: { 200: TotpSetup } } }, async (req, reply) => {
    const setup = await twoFactor.begin(await enrollerOf(principalOf(req)));
    if (!setup) throw refused(409, 'totp/already-enabled');
    reply.header('cache-control', 'no-store');
    return setup;
  });

  // The first code proves the authenticator: it is on, the caller's other sessions end, and this one is signed in
  // with the second factor (an admin's console opens without logging in again).
  r.post('/user/totp/confirm', { preHandler: app.authenticate, schema: { tags: ['user'], summary: 'Turn two-factor sign-in on with a first code; answers the recovery codes (shown once)', body: TotpConfirmBody, response: { 200: TotpEnabled } } }, async (req, reply) => {
    const p = principalOf(req);
    await kit.refuseIfBlocked(reply, kit.limit.totpFailuresPerUser, p.uid);
    const row = await enrollerOf(p);
    const amr = [p.amr?.find((m) => m !== 'otp') ?? 'pwd', 'otp'];
    const now = ctx.clock.now();
    // On, the other sessions ended, the new session and the audit row (every user's, with where from): one commit.
    const confirmed = await twoFactor.confirm(row, req.body.code, async (tx) => {
      const sessionsEnded = await revokeUserSessions(tx, row.id, now);
      await auditOwnSecondFactor(tx, row, 'user.totp.enable', { before: { totp: false }, after: { totp: true, recoveryCodesLeft: RECOVERY_CODE_COUNT, sessionsEnded } }, signInFrom(req), now);
      return createSession(tx, row.id, now, amr);
    });
    if (!confirmed) return wrongCode(p.uid);
    const signedIn = await sessionAnswer(ctx.tokens, row, amr, confirmed.then.cookie);
    kit.setSession(reply, signedIn);
    return { recoveryCodes: confirmed.codes, session: signedIn.session };
  });

  r.post('/user/totp/disable', { preHandler: app.authenticate, schema: { tags: ['user'], summary: 'Turn two-factor sign-in off (password and a code)', body: TotpDisableBody, response: { 200: Ok } } }, async (req, reply) => {
    const p = principalOf(req);
    await kit.refuseIfBlocked(reply, kit.limit.totpFailuresPerUser, p.uid);
    const row = await userOf(p);
    if (!(await twoFactor.status(row)).enabled) throw refused(409, 'totp/not-enabled');
    if (!(await verifyPassword(req.body.password, row.passwordHash))) {
      await kit.limit.totpFailuresPerUser.hit(p.uid);
      throw refused(400, 'totp/password-failed');
    }
    const from = signInFrom(req);
    const now = ctx.clock.now();
    const factor = await useSecondFactor(ctx.db, row.id, req.body.code, now, (tx, left) =>
      auditOwnSecondFactor(tx, row, 'user.totp.recovery-code.use', { before: { recoveryCodesLeft: left + 1 }, after: { recoveryCodesLeft: left, during: 'disable' } }, from, now),
    );
    if (!factor) return wrongCode(p.uid);
    await twoFactor.disable(row.id, (tx, removed) =>
      auditOwnSecondFactor(tx, row, 'user.totp.disable', { before: { totp: true, recoveryCodesLeft: removed }, after: { totp: false, recoveryCodesLeft: 0, factor } }, from, now),
    );
    return { ok: true as const };
  });
}
