import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { and, eq, isNull, ne } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { sessions } from '../../db/schema/index';

/** Refresh sessions: the httpOnly cookie holds `<sessionId>.<secret>`; the database keeps only sha256(secret). */
export const SESSION_COOKIE = 'hd_session';
export const SESSION_COOKIE_PATH = '/v1/auth';
/**
 * A non-secret companion of the session cookie, readable by the page (path /, not httpOnly): set and cleared with
 * it, so the web app knows whether a refresh session may exist before calling /v1/auth/refresh (a signed-out visitor
 * never makes that call). It grants nothing: the refresh still needs the httpOnly cookie.
 */
export const SIGNED_IN_COOKIE = 'hd_signed_in';
export const SESSION_TTL_MS = 30 * 24 * 60 * 60_000;
/** How long the previous secret still works after a rotation (two tabs refreshing at once share one cookie jar). */
export const ROTATION_GRACE_MS = 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const newSecret = () => randomBytes(32).toString('base64url');

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export function parseCookie(value: string | undefined): { id: string; secret: string } | null {
  if (!value || value.length > 200) return null;
  const dot = value.indexOf('.');
  const id = value.slice(0, dot);
  const secret = value.slice(dot + 1);
  return dot > 0 && UUID.test(id) && secret.length >= 16 ? { id, secret } : null;
}

export interface IssuedSession {
  id: string;
  cookie: string;
}

/** amr: how the sign-in was made ('pwd', 'sso', with 'otp' after a second factor); every refresh's token says so. */
export async function createSession(q: Queryable, userId: string, now: Date, amr: readonly string[] = ['pwd']): Promise<IssuedSession> {
  const id = randomUUID();
  const secret = newSecret();
  await q.insert(sessions).values({
    id,
    userId,
    amr: amr.join(' '),
    secretHash: sha256(secret),
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
  });
  return { id, cookie: `${id}.${secret}` };
}

const amrOf = (stored: string) => stored.split(' ').filter(Boolean);

export type RefreshOutcome =
  | { ok: true; userId: string; sessionId: string; cookie: string | null; amr: string[] }
  | { ok: false };

/**
 * The new secret of a rotation, sealed (AES-256-GCM) under a key derived from the secret it replaces. Whoever
 * presents the previous secret can open it; the database alone cannot (it holds only that secret's hash).
 */
function sealNext(previous: string, next: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', nextKey(previous), iv);
  const body = Buffer.concat([cipher.update(next, 'utf8'), cipher.final()]);
  return [iv, body, cipher.getAuthTag()].map((b) => b.toString('base64url')).join('.');
}

function openNext(previous: string, sealed: string | null): string | null {
  const [iv, body, tag] = (sealed ?? '').split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !body || !tag) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', nextKey(previous), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

const nextKey = (previous: string) => Buffer.from(hkdfSync('sha256', previous, '', 'hyperdesk session next secret', 32));

type SessionRow = typeof sessions.$inferSelect;

const signedIn = (row: SessionRow, cookie: string | null): RefreshOutcome => ({
  ok: true,
  userId: row.userId,
  sessionId: row.id,
  cookie,
  amr: amrOf(row.amr),
});

/** The current secret presented: a new one replaces it, and the presented one becomes the previous. */
async function rotate(q: Queryable, row: SessionRow, presented: string, now: Date): Promise<RefreshOutcome> {
  const presentedHash = sha256(presented);
  const next = newSecret();
  const rotated = await q
    .update(sessions)
    .set({
      secretHash: sha256(next),
      prevSecretHash: presentedHash,
      nextSecretSealed: sealNext(presented, next),
      rotatedAt: now,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    })
    .where(and(eq(sessions.id, row.id), eq(sessions.secretHash, presentedHash), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  if (rotated.length) return signedIn(row, `${row.id}.${next}`);
  // A parallel refresh of the same cookie rotated it first: answer the cookie that one made.
  const [current] = await q.select().from(sessions).where(eq(sessions.id, row.id));
  if (!current || current.revokedAt || !current.prevSecretHash || !sameHash(presentedHash, current.prevSecretHash)) {
    return signedIn(row, null);
  }
  return again(current, presented);
}

/** The previous secret inside the grace period: the same new cookie again (the first answer may have been lost). */
function again(row: SessionRow, presented: string): RefreshOutcome {
  const next = openNext(presented, row.nextSecretSealed);
  return signedIn(row, next ? `${row.id}.${next}` : null);
}

/**
 * Checks a cookie and rotates its secret. The current secret rotates (new cookie); the previous one within the grace
 * period answers the same new cookie again (two tabs refreshing at once share one cookie jar, and a page left while
 * its refresh was in flight never stored the answer); the previous one after that means the cookie was copied (or
 * replayed), so the session is revoked.
 */
export async function useSession(q: Queryable, value: string | undefined, now: Date): Promise<RefreshOutcome> {
  const parsed = parseCookie(value);
  if (!parsed) return { ok: false };
  const [row] = await q.select().from(sessions).where(eq(sessions.id, parsed.id));
  if (!row || row.revokedAt || row.expiresAt <= now) return { ok: false };
  const presented = sha256(parsed.secret);
  if (sameHash(presented, row.secretHash)) return rotate(q, row, parsed.secret, now);
  if (!row.prevSecretHash || !sameHash(presented, row.prevSecretHash)) return { ok: false };
  if (row.rotatedAt && now.getTime() - row.rotatedAt.getTime() < ROTATION_GRACE_MS) return again(row, parsed.secret);
  await q.update(sessions).set({ revokedAt: now }).where(and(eq(sessions.id, row.id), isNull(sessions.revokedAt)));
  return { ok: false };
}

/** Revokes the session the cookie names, if the cookie's secret (current or previous) matches. */
export async function revokeByCookie(q: Queryable, value: string | undefined, now: Date): Promise<boolean> {
  const parsed = parseCookie(value);
  if (!parsed) return false;
  const [row] = await q.select().from(sessions).where(eq(sessions.id, parsed.id));
  if (!row) return false;
  const h = sha256(parsed.secret);
  if (!sameHash(h, row.secretHash) && !(row.prevSecretHash && sameHash(h, row.prevSecretHash))) return false;
  await q.update(sessions).set({ revokedAt: now }).where(and(eq(sessions.id, row.id), isNull(sessions.revokedAt)));
  return true;
}

/** Revokes every live session of a user, except `keep` when given; answers how many had not expired yet. */
export async function revokeUserSessions(q: Queryable, userId: string, now: Date, keep?: string): Promise<number> {
  const where = [eq(sessions.userId, userId), isNull(sessions.revokedAt)];
  if (keep) where.push(ne(sessions.id, keep));
  const ended = await q.update(sessions).set({ revokedAt: now }).where(and(...where)).returning({ expiresAt: sessions.expiresAt });
  return ended.filter((r) => r.expiresAt > now).length;
}
