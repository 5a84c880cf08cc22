import { randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import type { User } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { users } from '../../db/schema/index';
import type { Principal } from './tokens';
import { hashPassword } from './passwords';

export type UserRow = typeof users.$inferSelect;
export type Claim = 'instructor' | 'admin';
export const CLAIMS: readonly Claim[] = ['instructor', 'admin'];

/** E-mails are stored trimmed and lower-cased, so the unique index makes them unique case-insensitively. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A pragmatic shape check (one @, a dot in the domain, no spaces); the reset e-mail proves the rest. */
export function isValidEmail(email: string): boolean {
  if (email.length > 254) return false;
  const m = /^([^\s@"<>(),;:]+)@([^\s@"<>(),;:]+\.[^\s@"<>(),;:.]{2,})$/.exec(email);
  return !!m && m[1]!.length <= 64 && !m[2]!.includes('..') && !m[2]!.startsWith('.') && !m[1]!.startsWith('.');
}

export async function findUserByEmail(q: Queryable, email: string): Promise<UserRow | undefined> {
  const [row] = await q.select().from(users).where(eq(users.email, normalizeEmail(email)));
  return row;
}

export async function findUserById(q: Queryable, id: string): Promise<UserRow | undefined> {
  const [row] = await q.select().from(users).where(eq(users.id, id));
  return row;
}

/** Inserts a user; undefined when the e-mail is taken (also when a parallel sign-up won the race). */
export async function insertUser(
  q: Queryable,
  u: { email: string; displayName: string; password: string; instructor?: boolean; admin?: boolean; verified?: boolean; now: Date },
): Promise<UserRow | undefined> {
  const passwordHash = await hashPassword(u.password);
  const [row] = await q
    .insert(users)
    .values({
      id: randomUUID(),
      email: normalizeEmail(u.email),
      displayName: u.displayName.trim(),
      passwordHash,
      instructor: u.instructor ?? false,
      admin: u.admin ?? false,
      createdAt: u.now,
      passwordChangedAt: u.now,
      emailVerifiedAt: u.verified ? u.now : null,
    })
    .onConflictDoNothing({ target: users.email })
    .returning();
  return row;
}

/** Sets or clears one claim; undefined for an unknown e-mail. The claim reaches the user's next id token. */
export async function setClaim(q: Queryable, email: string, claim: Claim, value: boolean): Promise<UserRow | undefined> {
  const [row] = await q
    .update(users)
    .set(claim === 'admin' ? { admin: value } : { instructor: value })
    .where(eq(users.email, normalizeEmail(email)))
    .returning();
  return row;
}

export async function listUsers(q: Queryable): Promise<UserRow[]> {
  return q.select().from(users).orderBy(asc(users.createdAt), asc(users.email));
}

export function toUser(row: UserRow): User {
  return { uid: row.id, displayName: row.displayName, email: row.email, instructor: row.instructor, admin: row.admin };
}

/** The id token's claims for a user; amr says how this sign-in was made ('pwd', 'sso', plus 'otp' for a code). */
export function toPrincipal(row: UserRow, amr: readonly string[] = ['pwd']): Principal {
  return { uid: row.id, email: row.email, name: row.displayName, instructor: row.instructor, admin: row.admin, emailVerified: !!row.emailVerifiedAt, amr, mfa: amr.includes('otp') };
}

/**
 * False for a disabled (or deleted) account. Id tokens are self-contained for 15 minutes, so the calls that start
 * machines or open desktops ask the database too: an operator's "disable" takes effect at once where it costs money.
 */
export async function accountActive(q: Queryable, uid: string): Promise<boolean> {
  const [row] = await q.select({ disabledAt: users.disabledAt }).from(users).where(eq(users.id, uid)).limit(1);
  return !!row && !row.disabledAt;
}
