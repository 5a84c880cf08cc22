import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

/**
 * A real OpenID provider for tests (`oidc-provider`, the certified Node implementation), serving on a free
 * loopback port. Its login page is a one-field form ("School account") that signs in any account the test put in
 * `accounts`; consent is implied (a first-party client). Used by the API tests (server/test/sso*.test.ts) and the
 * browser test (e2e/tests/sso.test.ts).
 */
export interface IdpAccount {
  email: string;
  emailVerified: boolean;
  name: string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, IdpAccount>;
  close(): Promise<void>;
}

/** An RS256 signing key; two providers given the same key sign tokens that verify with each other's JWKS. */
export async function signingKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

/**
 * Storage for providers that should honour each other's codes (one Map, like two servers on one database). Without
 * it each provider keeps its own (oidc-provider's in-memory adapter).
 */
export type SharedStore = Map<string, { payload: Record<string, unknown>; expiresAt: number }>;

function sharedAdapter(store: SharedStore) {
  return class {
    constructor(private readonly name: string) {}
    private key = (id: string) => `${this.name}:${id}`;
    async upsert(id: string, payload: Record<string, unknown>, expiresIn: number) {
      store.set(this.key(id), { payload, expiresAt: Date.now() + (expiresIn || 3600) * 1000 });
    }
    async find(id: string) {
      const hit = store.get(this.key(id));
      return hit && hit.expiresAt > Date.now() ? hit.payload : undefined;
    }
    async findByUid(uid: string) {
      for (const [k, v] of store) if (k.startsWith(`${this.name}:`) && v.payload.uid === uid) return v.payload;
      return undefined;
    }
    async findByUserCode() {
      return undefined;
    }
    async consume(id: string) {
      const hit = store.get(this.key(id));
      if (hit) hit.payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [k, v] of store) if (v.payload.grantId === grantId) store.delete(k);
    }
  };
}

export async function startIdp(o: {
  redirectUri: string;
  key?: JWK;
  store?: SharedStore;
  clientId?: string;
  clientSecret?: string;
  /** Publishes another provider's token endpoint in the discovery document (a provider handing out foreign id tokens). */
  tokenEndpointOf?: () => string;
}): Promise<TestIdp> {
  const accounts = new Map<string, IdpAccount>();
  const clientId = o.clientId ?? `hyperdesk-${randomBytes(4).toString('hex')}`;
  const clientSecret = o.clientSecret ?? randomBytes(24).toString('base64url');
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [o.redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
    jwks: { keys: [o.key ?? (await signingKey())] },
    ...(o.store ? { adapter: sharedAdapter(o.store) } : {}),
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The id token carries the e-mail claims the scopes asked for, as Google, Entra and Keycloak do.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, id) {
      const a = accounts.get(id);
      if (!a) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, email: a.email, email_verified: a.emailVerified, name: a.name }) };
    },
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { client, session } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const known = session.grantIdFor(client.clientId);
      if (known) return ctx.oidc.provider.Grant.find(known);
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      session.grantIdFor(client.clientId, grant.jti);
      return grant;
    },
  });
  if (o.tokenEndpointOf) {
    const other = o.tokenEndpointOf;
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.path === '/.well-known/openid-configuration' && ctx.body) ctx.body = { ...(ctx.body as object), token_endpoint: other() };
    });
  }

  const oidcHandler = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) void interaction(provider, accounts, req, res).catch((err) => fail(res, err));
    else void oidcHandler(req, res);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function fail(res: ServerResponse, err: unknown) {
  if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
  res.end(String(err));
}

const page = (error = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test School sign-in</title></head>
<body style="font-family:sans-serif;max-width:360px;margin:64px auto">
<h1>Test School</h1>
<form method="post"><label>School account <input name="login" autocomplete="off" autofocus></label>
${error ? `<p role="alert">${error}</p>` : ''}<button type="submit">Sign in</button></form></body></html>`;

async function interaction(provider: Provider, accounts: Map<string, IdpAccount>, req: IncomingMessage, res: ServerResponse) {
  await provider.interactionDetails(req, res);
  if (req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return res.end(page());
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  const login = new URLSearchParams(body).get('login')?.trim() ?? '';
  if (!accounts.has(login)) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return res.end(page('No such account.'));
  }
  await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
}

/** A tiny cookie jar for following redirects by hand (what a browser does between Hyperdesk and the provider). */
export class CookieJar {
  private cookies = new Map<string, string>();
  take(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  set(name: string, value: string) {
    this.cookies.set(name, value);
  }
}

/** GET without following redirects, through the jar; answers the status, Location and body. */
export async function hop(jar: CookieJar, url: string, init: { method?: string; form?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { cookie: jar.header() };
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
  jar.take(res.headers);
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location, url).href : null, text: await res.text() };
}

/**
 * Signs `account` in at the provider from its authorization URL, as a browser would (login form, then the
 * provider's redirects), and answers the redirect back to the relying party (its code, state and iss).
 */
export async function loginAtIdp(jar: CookieJar, authorizationUrl: string, account: string): Promise<URL> {
  let r = await hop(jar, authorizationUrl);
  for (let i = 0; i < 10 && r.location; i++) {
    const next = new URL(r.location);
    if (!next.pathname.startsWith('/interaction/') && !next.href.startsWith(new URL(authorizationUrl).origin)) return next;
    r = await hop(jar, r.location);
    if (next.pathname.startsWith('/interaction/') && r.status === 200) r = await hop(jar, next.href, { form: { login: account } });
  }
  throw new Error(`the provider did not redirect back (status ${r.status}): ${r.text.slice(0, 300)}`);
}
