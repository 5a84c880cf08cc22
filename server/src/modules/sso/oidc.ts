import * as oidc from 'openid-client';

/**
 * The relying-party side, all done by `openid-client` (panva): discovery, the authorization URL with PKCE (S256),
 * state and nonce, the code exchange, and the id token's checks (signature against the provider's JWKS — turned on
 * with enableNonRepudiationChecks —, iss, aud, azp, exp, iat, nonce, and the `iss` response parameter when the
 * provider announces it). A provider's configuration (its discovery document and key cache) is kept per
 * provider version for DISCOVERY_TTL_MS; an edit gives a new version.
 */
export const DISCOVERY_TTL_MS = 60 * 60_000;
const TIMEOUT_SECONDS = 10;

/** Plain http only for a loopback issuer (a provider on the same machine, as in development); https otherwise. */
const LOOPBACK = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(\/|$)/;
export const issuerUrlAllowed = (issuer: string) => issuer.startsWith('https://') || LOOPBACK.test(issuer);

export interface ProviderKeys {
  id: string;
  version: number;
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** client_secret_basic (the OpenID default) unless the provider only takes client_secret_post. */
function clientAuth(meta: oidc.ServerMetadata, secret: string): oidc.ClientAuth {
  const methods = meta.token_endpoint_auth_methods_supported;
  return !methods || methods.includes('client_secret_basic') ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
}

/** Reads the discovery document and builds the client; throws when the issuer cannot be reached or does not match. */
export async function discover(p: Omit<ProviderKeys, 'id' | 'version'>): Promise<oidc.Configuration> {
  if (!issuerUrlAllowed(p.issuer)) throw new Error('the issuer must be an https:// URL');
  const insecure = !p.issuer.startsWith('https://');
  const found = await oidc.discovery(new URL(p.issuer), p.clientId, undefined, undefined, {
    timeout: TIMEOUT_SECONDS,
    ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  const meta = found.serverMetadata();
  const config = new oidc.Configuration(meta, p.clientId, { client_secret: p.clientSecret }, clientAuth(meta, p.clientSecret));
  config.timeout = TIMEOUT_SECONDS;
  if (insecure) oidc.allowInsecureRequests(config);
  oidc.enableNonRepudiationChecks(config);
  return config;
}

export function createClients(now: () => number) {
  const cache = new Map<string, { version: number; at: number; config: Promise<oidc.Configuration> }>();
  return {
    configFor(p: ProviderKeys): Promise<oidc.Configuration> {
      const hit = cache.get(p.id);
      if (hit && hit.version === p.version && now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
      const config = discover(p);
      cache.set(p.id, { version: p.version, at: now(), config });
      // A failed discovery is not remembered: the next sign-in asks again.
      config.catch(() => {
        if (cache.get(p.id)?.config === config) cache.delete(p.id);
      });
      return config;
    },
  };
}
export type Clients = ReturnType<typeof createClients>;

export interface AuthorizationStart {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export async function authorizationStart(config: oidc.Configuration, redirectUri: string): Promise<AuthorizationStart> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, state, nonce, codeVerifier };
}

/** What the verified id token says about the user. */
export interface IdClaims {
  sub: string;
  email: string | null;
  emailVerified: boolean;
  name: string;
}

/** Exchanges the code (PKCE) and verifies the id token; throws on any mismatch. */
export async function finishAuthorization(
  config: oidc.Configuration,
  callbackUrl: URL,
  checks: { state: string; nonce: string; codeVerifier: string },
): Promise<IdClaims> {
  const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    pkceCodeVerifier: checks.codeVerifier,
    idTokenExpected: true,
  });
  const c = tokens.claims();
  if (!c) throw new Error('no id token');
  const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  const name = str(c.name) || [str(c.given_name), str(c.family_name)].filter(Boolean).join(' ');
  return { sub: c.sub, email: str(c.email) || null, emailVerified: c.email_verified === true, name };
}
