import { sql, type SQL } from 'drizzle-orm';
import type { AdminMachine, AdminMachinePage, FleetState, StopKind } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { liveLotsOf } from '../ledger/service';
import { beforeTimeId, decodeCursor, iso, isoOrNull, likeOf, pageOf, userIdFilter, UUID_RE } from './cursor';

type Row = {
  id: string;
  k: string;
  name: string;
  region: string;
  platform: string;
  desired: 'running' | 'stopped';
  observed: 'offline' | 'processing' | 'online';
  provider: string | null;
  online_since: unknown;
  stop_reason: string | null;
  stopped_by: StopKind | null;
  stopped_at: unknown;
  updated_at: unknown;
  owner_id: string | null;
  owner_email: string | null;
  course_id: string | null;
  course_name: string | null;
  instructor_email: string | null;
  left_minutes: number | string;
};

const toMachine = (r: Row): AdminMachine => ({
  id: r.id,
  name: r.name,
  region: r.region,
  platform: r.platform,
  owner: r.owner_id ? { uid: r.owner_id, email: r.owner_email ?? '' } : null,
  course: r.course_id ? { id: r.course_id, name: r.course_name ?? '', instructorEmail: r.instructor_email } : null,
  desired: r.desired,
  observed: r.observed,
  minutesLeft: Number(r.left_minutes),
  provider: r.provider,
  onlineSince: isoOrNull(r.online_since),
  stopReason: r.stop_reason,
  lastStop: r.stopped_by ? { by: r.stopped_by, at: iso(r.stopped_at) } : null,
  updatedAt: iso(r.updated_at),
});

const STATE: Record<FleetState, SQL> = {
  all: sql`true`,
  online: sql`m.observed = 'online'`,
  processing: sql`m.observed = 'processing'`,
  offline: sql`m.observed = 'offline'`,
  running: sql`m.desired = 'running'`,
  stopped: sql`m.desired = 'stopped'`,
};

const select = (where: SQL, now: Date, tail: SQL = sql``) => sql`
  select m.id, m.created_at::text as k, m.name, m.region, m.platform, m.desired, m.observed, m.provider, m.online_since,
    m.stop_reason, m.stopped_by, m.stopped_at, m.updated_at, o.id as owner_id, o.email as owner_email, c.id as course_id, c.name as course_name,
    i.email as instructor_email, t.left_minutes
  from machines m
  left join users o on o.id = m.owner_user_id
  left join courses c on c.id = m.course_id
  left join users i on i.id = c.owner_user_id
  cross join lateral ${liveLotsOf(sql`m.id`, now)} t
  where ${where} ${tail}`;

/** Newest first; `q` matches the owner's or instructor's e-mail, the machine's name, or its id exactly. */
export async function listFleet(q: Queryable, o: { after?: string; limit: number; q?: string; state: FleetState }, now: Date): Promise<AdminMachinePage> {
  const c = decodeCursor(o.after);
  const text = o.q;
  let search = sql`true`;
  if (text && UUID_RE.test(text)) search = sql`(m.id = ${text}::uuid or m.course_id = ${text}::uuid or m.owner_user_id = ${text}::uuid)`;
  else if (text) {
    const byUser = await userIdFilter(q, text);
    search = sql`(${byUser(sql`m.owner_user_id`)} or ${byUser(sql`c.owner_user_id`)} or m.name ilike ${likeOf(text)})`;
  }
  const where = sql`${STATE[o.state]} and ${search} and ${beforeTimeId(sql`m.created_at`, sql`m.id`, c)}`;
  const res = await q.execute(select(where, now, sql`order by m.created_at desc, m.id desc limit ${o.limit + 1}`));
  return pageOf(res.rows as Row[], o.limit, toMachine);
}

export async function adminMachineById(q: Queryable, id: string, now: Date): Promise<AdminMachine | null> {
  const res = await q.execute(select(sql`m.id = ${id}::uuid`, now));
  const r = res.rows[0] as Row | undefined;
  return r ? toMachine(r) : null;
}
