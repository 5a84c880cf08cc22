import { sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { BadRequest } from '../../errors';

/**
 * Keyset pagination: a page ends with the sort key of its last row, and the next page starts strictly after it,
 * so pages stay stable while rows are added and cost the same at page 1 and page 4,000 (no OFFSET).
 * The cursor is opaque to the browser: base64url of [key, id]. Timestamps travel as Postgres text, so the
 * comparison keeps their microseconds.
 */
export type Cursor = [key: string, id: string];

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

export function decodeCursor(after: string | undefined): Cursor | null {
  if (!after) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && v[0].length <= 100 && v[1].length <= 100) {
      return [v[0], v[1]];
    }
  } catch {
    /* fall through */
  }
  throw new BadRequest('Invalid page cursor.', 'admin/bad-cursor');
}

/** Rows come with a `k` (sort key as text) and an `id`; one row more than the limit tells whether a next page exists. */
export function pageOf<R extends { k: string; id: string | number }, T>(rows: R[], limit: number, map: (r: R) => T) {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  return { items: shown.map(map), next: more && last ? encodeCursor([last.k, String(last.id)]) : null };
}

/** `%q%` for ILIKE with the wildcards in q escaped. */
export const likeOf = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const USER_IDS_INLINE = 500;

/**
 * Users whose e-mail or name contains `text`. E-mails are stored lower-case, so they take a plain LIKE (cheaper
 * than ILIKE); a text with an @ can only be part of an e-mail, so names are not searched then.
 */
export function userMatch(text: string, email: SQL, name: SQL): SQL {
  const byEmail = sql`${email} like ${likeOf(text.toLowerCase())}`;
  return text.includes('@') ? byEmail : sql`(${byEmail} or ${name} ilike ${likeOf(text)})`;
}

/**
 * A filter "column holds the id of a user whose e-mail or name contains `like`". The users are looked up first
 * (trigram indexes, migration 0700); up to 500 ids go into the list query as constants, so the planner can use the
 * column's index (a sub-select ORed with other terms would scan the list's table instead). More matches than
 * that: the sub-select.
 */
export async function userIdFilter(q: Queryable, text: string): Promise<(col: SQL) => SQL> {
  const match = userMatch(text, sql`email`, sql`display_name`);
  const res = await q.execute(sql`select id from users where ${match} limit ${USER_IDS_INLINE + 1}`);
  const ids = (res.rows as { id: string }[]).map((r) => r.id);
  if (ids.length > USER_IDS_INLINE) return (col) => sql`${col} in (select id from users where ${match})`;
  if (!ids.length) return () => sql`false`;
  const list = sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `);
  return (col) => sql`${col} in (${list})`;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `(created_at, id) < cursor` for newest-first lists keyed by a timestamp and a uuid. */
export function beforeTimeId(col: SQL, idCol: SQL, c: Cursor | null): SQL {
  if (!c) return sql`true`;
  if (!UUID_RE.test(c[1])) throw new BadRequest('Invalid page cursor.', 'admin/bad-cursor');
  return sql`(${col}, ${idCol}) < (${c[0]}::timestamptz, ${c[1]}::uuid)`;
}

export const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();
export const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));
