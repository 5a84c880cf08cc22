import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { users } from '../../db/schema/index';
import { hashPassword } from '../identity/passwords';
import { revokeUserSessions } from '../identity/sessions';
import { findUserByEmail, findUserById, insertUser, type UserRow } from '../identity/users';
import { SsoError } from './errors';

/** A password nobody knows: the account signs in through its school (or sets one with Forgot Password). */
const unknowablePassword = () => randomBytes(32).toString('base64url');

/**
 * The account of a verified school e-mail: the existing one, or a new one created verified (so a roster student is
 * a student at once, courses/entries.ts). An existing account whose address was never proven is taken over by the
 * school's proof the way a password reset does it: marked verified, its sessions ended and its password replaced,
 * so someone who signed up with a student's address before the student cannot keep a way in.
 */
export async function accountForVerifiedEmail(db: Db, o: { email: string; name: string; now: Date }): Promise<UserRow> {
  const existing = await findUserByEmail(db, o.email);
  if (existing) return claimExisting(db, existing, o.now);
  const displayName = (o.name || o.email.split('@')[0]!).slice(0, 100);
  const created = await insertUser(db, { email: o.email, displayName, password: unknowablePassword(), verified: true, now: o.now });
  if (created) return created;
  // A parallel sign-up (or sign-in) created it first.
  const raced = await findUserByEmail(db, o.email);
  if (!raced) throw new Error('user vanished after a conflicting insert');
  return claimExisting(db, raced, o.now);
}

async function claimExisting(db: Db, row: UserRow, now: Date): Promise<UserRow> {
  if (row.disabledAt) throw new SsoError('sso/account-disabled', 'account disabled by an operator');
  if (row.emailVerifiedAt) return row;
  const passwordHash = await hashPassword(unknowablePassword());
  return db.transaction(async (tx) => {
    const [claimed] = await tx
      .update(users)
      .set({ emailVerifiedAt: now, passwordHash, passwordChangedAt: now })
      .where(and(eq(users.id, row.id), isNull(users.emailVerifiedAt)))
      .returning();
    // Another sign-in proved it a moment ago: its session stays.
    if (!claimed) return (await findUserById(tx, row.id))!;
    await revokeUserSessions(tx, row.id, now);
    return claimed;
  });
}
