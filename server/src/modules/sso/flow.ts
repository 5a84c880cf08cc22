import { randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ssoAttempts } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { sha256 } from '../identity/sessions';
import { isValidEmail, normalizeEmail, type UserRow } from '../identity/users';
import { accountForVerifiedEmail } from './accounts';
import { SsoError } from './errors';
import { authorizationStart, finishAuthorization, type Clients } from './oidc';
import { findProvider, keysOf, type ProviderRow } from './providers';
import type { SecretBox } from './secret-box';

/** How long a started sign-in may take at the provider (login page, consent) before its state is refused. */
export const ATTEMPT_TTL_MS = 10 * 60_000;
export const CALLBACK_PATH = '/v1/auth/sso/callback';

/** The browser secret (hd_sso cookie) an attempt is bound to: 32 random bytes, base64url. */
const BROWSER_SECRET = /^[A-Za-z0-9_-]{43}$/;
export const newBrowserSecret = () => randomBytes(32).toString('base64url');
export const browserSecretOk = (v: string | undefined): v is string => !!v && BROWSER_SECRET.test(v);

export function domainAllowed(email: string, domains: readonly string[]): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return domains.includes(domain);
}

/**
 * The authorization code flow of one sign-in. start() stores the state (hash), nonce and PKCE verifier, bound to the
 * browser's hd_sso secret, and answers the provider's authorization URL. callback() spends the attempt (single use,
 * unexpired, same browser) before anything else, lets openid-client check the response and the id token, then
 * requires a verified e-mail at an allowed domain and answers the matching (or new) account.
 */
export function createSsoFlow(deps: { db: Db; clock: Clock; box: SecretBox; clients: Clients; publicUrl: string }) {
  const { db, clock, box, clients } = deps;
  const redirectUri = `${deps.publicUrl}${CALLBACK_PATH}`;

  const configOf = async (p: ProviderRow) => {
    try {
      return await clients.configFor(keysOf(p, box));
    } catch (err) {
      throw new SsoError('sso/unavailable', `provider ${p.id} (${p.issuer}): ${(err as Error).message}`);
    }
  };

  return {
    redirectUri,

    async start(providerId: string, intent: 'login' | 'signup', browserSecret: string): Promise<URL> {
      const provider = await findProvider(db, providerId);
      if (!provider?.enabled) throw new SsoError('sso/unavailable', `provider ${providerId} unknown or disabled`);
      const a = await authorizationStart(await configOf(provider), redirectUri);
      const now = clock.now();
      await db.delete(ssoAttempts).where(lt(ssoAttempts.expiresAt, new Date(now.getTime() - ATTEMPT_TTL_MS)));
      await db.insert(ssoAttempts).values({
        stateHash: sha256(a.state),
        providerId,
        browserHash: sha256(browserSecret),
        nonce: a.nonce,
        codeVerifier: a.codeVerifier,
        intent,
        createdAt: now,
        expiresAt: new Date(now.getTime() + ATTEMPT_TTL_MS),
      });
      return a.url;
    },

    async callback(query: URLSearchParams, browserSecret: string | undefined): Promise<{ user: UserRow; provider: ProviderRow }> {
      const state = query.get('state');
      if (!state || !browserSecretOk(browserSecret)) throw new SsoError('sso/expired', 'no state or no hd_sso cookie');
      const now = clock.now();
      // Spent first, whatever follows: a state works once, only in the browser that started it, only for a while.
      const [attempt] = await db
        .update(ssoAttempts)
        .set({ usedAt: now })
        .where(and(eq(ssoAttempts.stateHash, sha256(state)), eq(ssoAttempts.browserHash, sha256(browserSecret)), isNull(ssoAttempts.usedAt), gt(ssoAttempts.expiresAt, now)))
        .returning();
      if (!attempt) throw new SsoError('sso/expired', 'state unknown, used, expired or started in another browser');
      if (query.get('error')) throw new SsoError('sso/cancelled', `provider answered ${query.get('error')}: ${query.get('error_description') ?? ''}`);
      const provider = await findProvider(db, attempt.providerId);
      if (!provider?.enabled) throw new SsoError('sso/unavailable', `provider ${attempt.providerId} removed or disabled during the sign-in`);
      const config = await configOf(provider);
      let claims;
      try {
        claims = await finishAuthorization(config, new URL(`${redirectUri}?${query.toString()}`), { state, nonce: attempt.nonce, codeVerifier: attempt.codeVerifier });
      } catch (err) {
        throw new SsoError('sso/failed', `provider ${provider.id}: ${describe(err)}`);
      }
      const email = claims.email ? normalizeEmail(claims.email) : '';
      if (!email || !claims.emailVerified || !isValidEmail(email)) throw new SsoError('sso/email-unverified', `sub ${claims.sub}: email ${email || 'missing'}, email_verified ${claims.emailVerified}`);
      if (!domainAllowed(email, provider.allowedDomains)) throw new SsoError('sso/domain-not-allowed', `${email} is outside ${provider.allowedDomains.join(', ')}`);
      return { user: await accountForVerifiedEmail(db, { email, name: claims.name, now }), provider };
    },
  };
}
export type SsoFlow = ReturnType<typeof createSsoFlow>;

/** An openid-client failure for the log: its code, the provider's error, and the causes (which claim failed). */
function describe(err: unknown): string {
  const parts: string[] = [];
  let e = err as (Error & { code?: string; error?: string; error_description?: string; claim?: string; cause?: unknown }) | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    if (e.message) parts.push(`${e.code ?? e.name ?? 'Error'}: ${e.message}`);
    if (e.error) parts.push(`${e.error}${e.error_description ? `: ${e.error_description}` : ''}`);
    if (typeof e.claim === 'string') parts.push(`claim ${e.claim}`);
    e = e.cause as typeof e;
  }
  return parts.join(' | ').slice(0, 1000);
}
