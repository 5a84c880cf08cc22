import { randomUUID } from 'node:crypto';
import { users } from '../src/db/schema/index';
import type { Db } from '../src/db/client';
import type { Tokens } from '../src/modules/identity/tokens';
import type { TestServer } from './harness';

export interface TestUser {
  id: string;
  email: string;
  token: string;
}

/** Seeds a user row and signs an id token for it (the commerce tests do not depend on the sign-up flow). */
export async function seedUser(db: Db, tokens: Tokens, opts: { instructor?: boolean } = {}): Promise<TestUser> {
  const id = randomUUID();
  const email = `buyer-${id.slice(0, 8)}@example.com`;
  await db.insert(users).values({
    id,
    email,
    displayName: 'Test Buyer',
    passwordHash: 'not-a-real-hash',
    instructor: opts.instructor ?? false,
    passwordChangedAt: new Date(Date.now() - 3_600_000),
    createdAt: new Date(Date.now() - 3_600_000),
  });
  const token = await tokens.sign({ uid: id, email, name: 'Test Buyer', instructor: opts.instructor ?? false, admin: false, emailVerified: false });
  return { id, email, token };
}

export const makeUser = (s: TestServer, opts: { instructor?: boolean } = {}) => seedUser(s.database.db, s.app.ctx.tokens, opts);

/** The recharge body for a pack with return URLs on the server's public origin. */
export function rechargeBody(s: TestServer, packId: string, extra: Record<string, unknown> = {}) {
  return { packId, success_url: `${s.config.publicUrl}/success`, cancel_url: `${s.config.publicUrl}/failed`, ...extra };
}

/** Path part of a hosted-checkout URL (the server's PUBLIC_URL in tests is not where it listens). */
export const pathOf = (url: string) => new URL(url).pathname;

/** Posts the built-in checkout form like a browser does (no redirect following). */
export async function submitCard(
  base: string,
  sessionPath: string,
  card: { number: string; exp?: string; cvc?: string; name?: string },
): Promise<{ status: number; location: string | null; html: string }> {
  const body = new URLSearchParams({ exp: '12/34', cvc: '123', name: 'Ada Lovelace', ...card });
  const res = await fetch(`${base}${sessionPath}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}
