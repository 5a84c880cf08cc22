import { SignJWT, jwtVerify, generateKeyPair, exportJWK, importJWK, createLocalJWKSet, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import { desc, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { signingKeys } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { Unauthorized } from '../../errors';

export const ID_TOKEN_TTL_SECONDS = 15 * 60;
const ISSUER = 'hyperdesk';
const AUDIENCE = 'hyperdesk';
const ALG = 'ES256';
const SIGNING_KEY_LOCK = 727_003; // advisory lock id: one replica creates the first signing key
/** Verified tokens remembered (oldest forgotten first): an ES256 check costs more CPU than the rest of a read. */
const VERIFIED_CACHE_SIZE = 10_000;

import type { Principal } from '../../lib/principal';

/** Re-exported so existing `import type { Principal } from '…/identity/tokens'` keep working. */
export type { Principal };

export interface Tokens {
  sign(p: Principal): Promise<string>;
  verify(token: string): Promise<Principal>;
  jwks(): { keys: JWK[] };
}

/** Loads the signing key from the database, generating it on first start (concurrent starts agree on one). */
export async function createTokens(db: Db, clock: Clock): Promise<Tokens> {
  let rows = await db.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
  if (rows.length === 0) {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
    const kid = randomUUID();
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ALG };
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
    // Two replicas booting on an empty database: the first to take the lock creates the key, the other finds it.
    rows = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${SIGNING_KEY_LOCK})`);
      const existing = await tx.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
      if (existing.length) return existing;
      await tx.insert(signingKeys).values({ kid, privateJwk, publicJwk });
      return tx.select().from(signingKeys).orderBy(desc(signingKeys.createdAt));
    });
  }
  const current = rows[0]!;
  const privateKey = await importJWK(current.privateJwk as JWK, ALG);
  const publicKeys = rows.map((r) => r.publicJwk as JWK);
  const keySet = createLocalJWKSet({ keys: publicKeys });
  // The same bytes verified once are the same claims until they expire: a hit skips the signature check, and an
  // expired token is checked again (and refused) like any other. Nothing is cached for a token that failed.
  const verified = new Map<string, { principal: Principal; expiresAt: number }>();
  const remember = (token: string, checked: { principal: Principal; expiresAt: number }) => {
    if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
    verified.set(token, checked);
  };
  const verifySignature = async (token: string, now: Date): Promise<{ principal: Principal; expiresAt: number }> => {
    try {
      const { payload } = await jwtVerify(token, keySet, { issuer: ISSUER, audience: AUDIENCE, algorithms: [ALG], currentDate: now });
      if (typeof payload.sub !== 'string' || typeof payload.email !== 'string' || typeof payload.exp !== 'number') throw new Error('claims');
      const principal: Principal = Object.freeze({
        uid: payload.sub,
        email: payload.email,
        name: typeof payload.name === 'string' ? payload.name : '',
        instructor: payload.instructor === true,
        admin: payload.admin === true,
        emailVerified: payload.email_verified === true,
        amr: Array.isArray(payload.amr) ? Object.freeze(payload.amr.filter((m): m is string => typeof m === 'string')) : [],
        mfa: payload.mfa === true,
        ...(typeof payload.iat === 'number' ? { issuedAt: payload.iat } : {}),
      });
      return { principal, expiresAt: payload.exp * 1000 };
    } catch {
      throw new Unauthorized('Your session has expired. Please log in again.', 'auth/invalid-token');
    }
  };

  return {
    async sign(p) {
      const now = Math.floor(clock.now().getTime() / 1000);
      const amr = [...(p.amr ?? [])];
      const mfa = amr.includes('otp');
      return new SignJWT({ email: p.email, email_verified: p.emailVerified, name: p.name, instructor: p.instructor, admin: p.admin, amr, mfa })
        .setProtectedHeader({ alg: ALG, kid: current.kid, typ: 'JWT' })
        .setSubject(p.uid)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + ID_TOKEN_TTL_SECONDS)
        .sign(privateKey);
    },
    async verify(token) {
      const now = clock.now();
      const known = verified.get(token);
      if (known && known.expiresAt > now.getTime()) return known.principal;
      const checked = await verifySignature(token, now);
      remember(token, checked);
      return checked.principal;
    },
    jwks: () => ({ keys: publicKeys }),
  };
}
