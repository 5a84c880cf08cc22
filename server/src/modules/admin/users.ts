import { sql, type SQL } from 'drizzle-orm';
import type { AdminUser, AdminUserPage } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { decodeCursor, iso, isoOrNull, pageOf, userMatch } from './cursor';

type Row = {
  id: string;
  k: string;
  email: string;
  display_name: string;
  instructor: boolean;
  admin: boolean;
  email_verified_at: unknown;
  disabled_at: unknown;
  created_at: unknown;
  active_sessions: number | string;
  two_factor: boolean;
};

const toAdminUser = (r: Row): AdminUser => ({
  uid: r.id,
  email: r.email,
  displayName: r.display_name,
  instructor: r.instructor,
  admin: r.admin,
  emailVerified: r.email_verified_at !== null,
  disabledAt: isoOrNull(r.disabled_at),
  createdAt: iso(r.created_at),
  activeSessions: Number(r.active_sessions),
  twoFactor: r.two_factor,
});

const select = (where: SQL, now: Date, tail: SQL = sql``) => sql`
  select u.id, u.email as k, u.email, u.display_name, u.instructor, u.admin, u.email_verified_at, u.disabled_at, u.created_at,
    (select count(*) from sessions s where s.user_id = u.id and s.revoked_at is null and s.expires_at > ${now.toISOString()}::timestamptz) as active_sessions,
    exists (select 1 from user_totp t where t.user_id = u.id and t.confirmed_at is not null) as two_factor
  from users u where ${where} ${tail}`;

/** Sorted by e-mail (the unique index), so a page is an index range; `q` matches e-mail or name. */
export async function listUsers(q: Queryable, o: { after?: string; limit: number; q?: string }, now: Date): Promise<AdminUserPage> {
  const c = decodeCursor(o.after);
  const where = sql`${c ? sql`u.email > ${c[0]}` : sql`true`} and ${o.q ? userMatch(o.q, sql`u.email`, sql`u.display_name`) : sql`true`}`;
  const res = await q.execute(select(where, now, sql`order by u.email limit ${o.limit + 1}`));
  return pageOf(res.rows as Row[], o.limit, toAdminUser);
}

export async function adminUserById(q: Queryable, id: string, now: Date): Promise<AdminUser | null> {
  const res = await q.execute(select(sql`u.id = ${id}::uuid`, now));
  const r = res.rows[0] as Row | undefined;
  return r ? toAdminUser(r) : null;
}

