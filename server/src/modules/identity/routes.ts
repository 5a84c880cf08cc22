import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  ChangePasswordBody,
  DisplayNameBody,
  EmailVerification,
  ForgotBody,
  LoginAnswer,
  LoginBody,
  Ok,
  ResetBody,
  Session,
  SignupBody,
  User,
  VerifyEmailBody,
  VerifyEmailResult,
} from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { BadRequest, HttpError } from '../../errors';
import { authError, createIdentity, type SignedIn } from './service';
import { isValidEmail, normalizeEmail } from './users';
import { createLimiter, tooMany, type Limiter } from './ratelimit';
import { SESSION_COOKIE, SESSION_COOKIE_PATH, SESSION_TTL_MS, SIGNED_IN_COOKIE } from './sessions';
import { signInFrom } from './sign-in';
import { twoFactorRoutes } from './two-factor-routes';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Limits (per client IP; set TRUST_PROXY behind a proxy). Failures per IP+e-mail rather than per account, so
 * someone elsewhere cannot lock a real user out. Sign-up allows a classroom (up to 40 students) behind one NAT
 * address; every sign-up also costs a proof-of-work captcha.
 */
export const IDENTITY_LIMITS = {
  loginPerIp: { limit: 60, windowMs: MINUTE },
  loginFailuresPerIpEmail: { limit: 10, windowMs: 15 * MINUTE },
  signupPerIp: { limit: 50, windowMs: HOUR },
  forgotPerIp: { limit: 10, windowMs: HOUR },
  forgotPerEmail: { limit: 3, windowMs: HOUR },
  resetPerIp: { limit: 20, windowMs: HOUR },
  changePasswordFailuresPerUser: { limit: 10, windowMs: 15 * MINUTE },
  verifyPerIp: { limit: 30, windowMs: HOUR },
  /** The code step of a sign-in (each challenge also takes 5 wrong codes, each account 10 per 15 minutes). */
  mfaPerIp: { limit: 30, windowMs: MINUTE },
  /** Wrong codes when turning two-factor sign-in on or off. */
  totpFailuresPerUser: { limit: 10, windowMs: 15 * MINUTE },
  resendVerifyPerIp: { limit: 10, windowMs: HOUR },
  resendVerifyPerUser: { limit: 3, windowMs: HOUR },
};

export async function identityRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const identity = createIdentity({
    db: ctx.db,
    clock: ctx.clock,
    tokens: ctx.tokens,
    mailer: ctx.mailer,
    captcha: ctx.captcha,
    publicUrl: ctx.config.publicUrl,
  });
  const limit = Object.fromEntries(
    Object.entries(IDENTITY_LIMITS).map(([k, rule]) => [k, createLimiter(ctx.counters, ctx.clock, k, rule)]),
  ) as Record<keyof typeof IDENTITY_LIMITS, Limiter>;

  // Plain http only on a loopback public URL (local development); everywhere else the cookie is Secure.
  const secure = !/^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(ctx.config.publicUrl);
  const cookieOptions = { path: SESSION_COOKIE_PATH, httpOnly: true, sameSite: 'lax' as const, secure };
  const markerOptions = { path: '/', httpOnly: false, sameSite: 'lax' as const, secure };
  const setCookies = (reply: FastifyReply, cookie: string) => {
    reply.setCookie(SESSION_COOKIE, cookie, { ...cookieOptions, maxAge: SESSION_TTL_MS / 1000 });
    reply.setCookie(SIGNED_IN_COOKIE, '1', { ...markerOptions, maxAge: SESSION_TTL_MS / 1000 });
  };
  const clearCookies = (reply: FastifyReply) => {
    reply.clearCookie(SESSION_COOKIE, cookieOptions);
    reply.clearCookie(SIGNED_IN_COOKIE, markerOptions);
  };

  /** Sets the refresh cookie of a sign-in (when it has a new one); answers are never cached. */
  const setSession = (reply: FastifyReply, s: SignedIn) => {
    if (s.cookie) setCookies(reply, s.cookie);
    reply.header('cache-control', 'no-store');
  };
  const send = (reply: FastifyReply, s: SignedIn, status = 200) => {
    setSession(reply, s);
    return reply.status(status).send(s.session);
  };
  const refuse = async (reply: FastifyReply, limiter: Limiter, key: string) => {
    const seconds = await limiter.retryAfter(key);
    reply.header('retry-after', String(seconds));
    return tooMany(seconds);
  };
  const take = async (reply: FastifyReply, limiter: Limiter, key: string) => {
    if (!(await limiter.hit(key))) throw await refuse(reply, limiter, key);
  };
  const refuseIfBlocked = async (reply: FastifyReply, limiter: Limiter, key: string) => {
    if (await limiter.blocked(key)) throw await refuse(reply, limiter, key);
  };
  const cookieOf = (req: FastifyRequest) => req.cookies[SESSION_COOKIE];
  const failedWith = (err: unknown, code: string) => err instanceof HttpError && err.code === code;

  // A reset mail queued by a request is sent right after commit, in the background (SMTP never slows the answer).
  const deliverSoon = () => {
    if (ctx.mailer.sends) ctx.mailer.flush().catch((err) => ctx.log.warn({ err }, 'mail flush failed'));
  };
  app.addHook('onClose', async () => ctx.mailer.idle());

  r.post('/auth/signup', { schema: { tags: ['auth'], body: SignupBody, response: { 201: Session } } }, async (req, reply) => {
    await take(reply, limit.signupPerIp, req.ip);
    const signedIn = await identity.signup(req.body);
    deliverSoon(); // the verification mail
    return send(reply, signedIn, 201);
  });

  // Opening a verification link needs the link's account signed in (the service answers why not, without spending
  // the link). The web refreshes its id token afterwards to get the email_verified claim.
  r.post(
    '/auth/verify-email',
    { schema: { tags: ['auth'], body: VerifyEmailBody, response: { 200: VerifyEmailResult } } },
    async (req, reply) => {
      await take(reply, limit.verifyPerIp, req.ip);
      const caller = req.headers.idtoken ? await ctx.tokens.verify(String(req.headers.idtoken)) : null;
      const { email } = await identity.verifyEmail(req.body.token, caller);
      return { ok: true as const, email };
    },
  );

  // Same answer whether or not a mail went out (already verified, or over the per-user limit).
  r.post(
    '/auth/verify-email/resend',
    { preHandler: app.authenticate, schema: { tags: ['auth'], response: { 200: Ok } } },
    async (req, reply) => {
      const p = principalOf(req);
      await take(reply, limit.resendVerifyPerIp, req.ip);
      const queued = (await limit.resendVerifyPerUser.hit(p.uid)) ? await identity.resendVerification(p) : false;
      if (queued) deliverSoon();
      return { ok: true as const };
    },
  );

  r.get(
    '/user/email-verification',
    { preHandler: app.authenticate, schema: { tags: ['user'], response: { 200: EmailVerification } } },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return identity.verificationStatus(principalOf(req));
    },
  );

  // A session, or (the account has a second factor) a challenge for POST /auth/mfa: see sign-in.ts.
  r.post('/auth/login', { schema: { tags: ['auth'], body: LoginBody, response: { 200: LoginAnswer } } }, async (req, reply) => {
    const key = `${req.ip}|${req.body.email}`;
    await take(reply, limit.loginPerIp, req.ip);
    await refuseIfBlocked(reply, limit.loginFailuresPerIpEmail, key);
    try {
      const outcome = await identity.login(req.body, signInFrom(req));
      if (outcome.kind === 'session') return send(reply, outcome.signedIn);
      reply.header('cache-control', 'no-store');
      return { mfaRequired: true as const, challenge: outcome.challenge, expiresIn: outcome.expiresIn };
    } catch (err) {
      if (failedWith(err, 'auth/login-failed')) await limit.loginFailuresPerIpEmail.hit(key);
      throw err;
    }
  });

  await twoFactorRoutes(app, ctx, { send, setSession, take, refuseIfBlocked, limit });

  r.post('/auth/refresh', { schema: { tags: ['auth'], response: { 200: Session } } }, async (req, reply) => {
    try {
      return send(reply, await identity.refresh(cookieOf(req)));
    } catch (err) {
      clearCookies(reply);
      throw err;
    }
  });

  r.post('/auth/logout', { schema: { tags: ['auth'] } }, async (req, reply) => {
    await identity.logout(cookieOf(req));
    clearCookies(reply);
    return reply.status(204).send();
  });

  r.post('/auth/forgot', { schema: { tags: ['auth'], body: ForgotBody, response: { 200: Ok } } }, async (req, reply) => {
    await take(reply, limit.forgotPerIp, req.ip);
    const email = normalizeEmail(req.body.email);
    if (!email) throw new BadRequest('Please enter your email.', 'auth/email-required');
    if (!isValidEmail(email)) throw authError(400, 'auth/invalid-email');
    // Over the per-address limit: the same answer, but no mail (and no hint that the address has an account).
    const queued = (await limit.forgotPerEmail.hit(email)) ? await identity.forgot(email) : false;
    if (queued) deliverSoon();
    return { ok: true as const };
  });

  r.post('/auth/reset', { schema: { tags: ['auth'], body: ResetBody, response: { 200: Ok } } }, async (req, reply) => {
    await take(reply, limit.resetPerIp, req.ip);
    await identity.reset(req.body);
    return { ok: true as const };
  });

  r.post(
    '/user/password',
    { preHandler: app.authenticate, schema: { tags: ['user'], body: ChangePasswordBody, response: { 200: Session } } },
    async (req, reply) => {
      const p = principalOf(req);
      await refuseIfBlocked(reply, limit.changePasswordFailuresPerUser, p.uid);
      try {
        return send(reply, await identity.changePassword(p, req.body));
      } catch (err) {
        if (failedWith(err, 'auth/password-change-failed')) await limit.changePasswordFailuresPerUser.hit(p.uid);
        throw err;
      }
    },
  );

  r.get('/user/me', { preHandler: app.authenticate, schema: { tags: ['user'], response: { 200: User } } }, async (req) =>
    identity.me(principalOf(req)),
  );

  r.patch(
    '/user/profile',
    { preHandler: app.authenticate, schema: { tags: ['user'], body: DisplayNameBody, response: { 200: User } } },
    async (req) => identity.updateProfile(principalOf(req), req.body.displayName),
  );
}
