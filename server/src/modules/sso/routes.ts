import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SsoButtonList, SsoStartQuery } from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { createLimiter } from '../identity/ratelimit';
import { SESSION_COOKIE, SESSION_COOKIE_PATH, SESSION_TTL_MS, SIGNED_IN_COOKIE } from '../identity/sessions';
import { completeSignIn, signInFrom } from '../identity/sign-in';
import type { UserRow } from '../identity/users';
import { SsoError } from './errors';
import { ATTEMPT_TTL_MS, browserSecretOk, createSsoFlow, newBrowserSecret } from './flow';
import { createClients } from './oidc';
import { enabledButtons } from './providers';
import { createSecretBox } from './secret-box';

/** The browser binding of sign-ins in flight: httpOnly, sent only to /v1/auth/sso (the start and the callback). */
export const SSO_COOKIE = 'hd_sso';
const SSO_COOKIE_PATH = '/v1/auth/sso';

/** Per client IP: a classroom of 40 behind one NAT address signs in within a minute, twice over. */
export const SSO_LIMITS = {
  ssoStartPerIp: { limit: 120, windowMs: 60_000 },
  ssoCallbackPerIp: { limit: 120, windowMs: 60_000 },
};

/**
 * Public single sign-on routes (issue 23.1): the buttons' list, the start (a redirect to the provider) and the
 * callback (a redirect to the dashboard, or to `/?login=1&sso_error=<code>`). Both redirects are top-level GET
 * navigations, so the SameSite=Lax cookies travel with them.
 */
export async function ssoRoutes(v1: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const box = await createSecretBox(ctx.db);
  const flow = createSsoFlow({ db: ctx.db, clock: ctx.clock, box, clients: createClients(() => ctx.clock.now().getTime()), publicUrl: ctx.config.publicUrl });
  const startLimit = createLimiter(ctx.counters, ctx.clock, 'ssoStartPerIp', SSO_LIMITS.ssoStartPerIp);
  const callbackLimit = createLimiter(ctx.counters, ctx.clock, 'ssoCallbackPerIp', SSO_LIMITS.ssoCallbackPerIp);

  // Plain http only on a loopback public URL (local development), as identity/routes.ts sets its cookies.
  const secure = !/^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(ctx.config.publicUrl);
  const page = (path: string) => `${ctx.config.publicUrl}${path}`;

  const refuse = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    const e = err instanceof SsoError ? err : new SsoError('sso/failed', (err as Error)?.message ?? String(err));
    if (!(err instanceof SsoError)) req.log.error({ err }, 'sso sign-in failed');
    else req.log.warn({ code: e.code, reason: e.reason }, 'sso sign-in refused');
    return reply.header('cache-control', 'no-store').redirect(page(`/?login=1&sso_error=${encodeURIComponent(e.code)}`));
  };

  /**
   * Ends the sign-in the way every sign-in ends (identity/sign-in.ts): a session with the same cookies a password
   * login sets (the refresh session and the page's marker), or, for an account with a second factor, the login
   * popup at its code step.
   */
  const signIn = async (req: FastifyRequest, reply: FastifyReply, user: UserRow): Promise<string> => {
    const outcome = await completeSignIn({ db: ctx.db, clock: ctx.clock, tokens: ctx.tokens }, user, { method: 'sso', ...signInFrom(req) });
    if (outcome.kind === 'challenge') return page(`/?login=1&mfa=${encodeURIComponent(outcome.challenge)}`);
    const maxAge = SESSION_TTL_MS / 1000;
    if (outcome.signedIn.cookie) reply.setCookie(SESSION_COOKIE, outcome.signedIn.cookie, { path: SESSION_COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure, maxAge });
    reply.setCookie(SIGNED_IN_COOKIE, '1', { path: '/', httpOnly: false, sameSite: 'lax', secure, maxAge });
    return page('/dashboard');
  };

  r.get('/auth/sso/providers', { schema: { tags: ['auth'], summary: 'Identity providers the sign-in popups offer', response: { 200: SsoButtonList } } }, async () => ({
    items: await enabledButtons(ctx.db),
  }));

  r.get(
    '/auth/sso/:id/start',
    { schema: { tags: ['auth'], summary: 'Start a sign-in with an identity provider (redirects there)', params: z.object({ id: z.string().uuid() }), querystring: SsoStartQuery } },
    async (req, reply) => {
      try {
        if (!(await startLimit.hit(req.ip))) throw new SsoError('sso/too-many', `start limit for ${req.ip}`);
        const existing = req.cookies[SSO_COOKIE];
        const secret = browserSecretOk(existing) ? existing : newBrowserSecret();
        const url = await flow.start(req.params.id, req.query.intent, secret);
        reply.setCookie(SSO_COOKIE, secret, { path: SSO_COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure, maxAge: ATTEMPT_TTL_MS / 1000 });
        return reply.header('cache-control', 'no-store').redirect(url.href);
      } catch (err) {
        return refuse(req, reply, err);
      }
    },
  );

  r.get('/auth/sso/callback', { schema: { tags: ['auth'], summary: "The identity provider's redirect back (redirects to the dashboard)" } }, async (req, reply) => {
    try {
      if (!(await callbackLimit.hit(req.ip))) throw new SsoError('sso/too-many', `callback limit for ${req.ip}`);
      const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
      const { user, provider } = await flow.callback(query, req.cookies[SSO_COOKIE]);
      req.log.info({ uid: user.id, provider: provider.id }, 'sso sign-in');
      return reply.header('cache-control', 'no-store').redirect(await signIn(req, reply, user));
    } catch (err) {
      return refuse(req, reply, err);
    }
  });
}
