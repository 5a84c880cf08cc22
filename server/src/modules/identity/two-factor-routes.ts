import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { MfaBody, Ok, Session, TotpConfirmBody, TotpDisableBody, TotpEnabled, TotpSetup, TWO_FACTOR_MESSAGES, TwoFactorStatus, type TwoFactorCode } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { HttpError } from '../../errors';
import type { Principal } from '../../lib/principal';
import { recordAudit } from '../admin/audit';
import type { Limiter } from './ratelimit';
import { createSession, revokeUserSessions } from './sessions';
import { finishWithCode, sessionAnswer, signInFrom, type SignedIn } from './sign-in';
import { createTwoFactor, useSecondFactor } from './two-factor';
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
  /** Counts a wrong code against the user (10 per 15 minutes), refusing once they are over. */
  const wrongCode = async (uid: string): Promise<never> => {
    await kit.limit.totpFailuresPerUser.hit(uid);
    throw refused(400, 'totp/code-failed');
  };
  /** An admin's second factor turned off is in the audit log (turning it on is not: every operator does, once). */
  const audit = async (row: UserRow, action: string) => {
    if (row.admin) await recordAudit(ctx.db, { uid: row.id, email: row.email, name: row.displayName, instructor: row.instructor, admin: true, emailVerified: !!row.emailVerifiedAt }, { action, targetType: 'user', targetId: row.id }, ctx.clock.now());
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
    const setup = await twoFactor.begin(await userOf(principalOf(req)));
    if (!setup) throw refused(409, 'totp/already-enabled');
    reply.header('cache-control', 'no-store');
    return setup;
  });

  // The first code proves the authenticator: it is on, the caller's other sessions end, and this one is signed in
  // with the second factor (an admin's console opens without logging in again).
  r.post('/user/totp/confirm', { preHandler: app.authenticate, schema: { tags: ['user'], summary: 'Turn two-factor sign-in on with a first code; answers the recovery codes (shown once)', body: TotpConfirmBody, response: { 200: TotpEnabled } } }, async (req, reply) => {
    const p = principalOf(req);
    await kit.refuseIfBlocked(reply, kit.limit.totpFailuresPerUser, p.uid);
    const row = await userOf(p);
    const codes = await twoFactor.confirm(row, req.body.code);
    if (!codes) return wrongCode(p.uid);
    const amr = [p.amr?.find((m) => m !== 'otp') ?? 'pwd', 'otp'];
    const now = ctx.clock.now();
    const issued = await ctx.db.transaction(async (tx) => {
      await revokeUserSessions(tx, row.id, now);
      return createSession(tx, row.id, now, amr);
    });
    const signedIn = await sessionAnswer(ctx.tokens, row, amr, issued.cookie);
    kit.setSession(reply, signedIn);
    return { recoveryCodes: codes, session: signedIn.session };
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
    if (!(await useSecondFactor(ctx.db, row.id, req.body.code, ctx.clock.now()))) return wrongCode(p.uid);
    await twoFactor.disable(row.id);
    await audit(row, 'user.totp.disable');
    return { ok: true as const };
  });
}
