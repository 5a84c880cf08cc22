import { formatCourseDate, type HoursAlert, type HoursNotice } from '@hyperdesk/contract';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { minutesToHours } from '../wallet/service';

export const PACE_WINDOW_MINUTES = 7 * 24 * 60;

interface Row {
  subject_kind: 'machine' | 'course';
  pack_id: string;
  name: string;
  region: string;
  left_minutes: number | string;
  last_expiry: Date | string | null;
  recent: number | string;
  first_recent: number | string | null;
  older: boolean | null;
  alerts: { kind: HoursAlert['kind']; expiresAt: string | null; minutes: number | null }[] | string | null;
}

/**
 * The machines (single user) and courses (instructor) `uid` controls, each with what its live lots hold, its metered
 * minutes of the last 7 days (from the metering keys `meter:<machine>:<epoch minute>`, so the pace follows the
 * minutes charged, not when rows were written) and its alerts still true now. One statement; students control
 * nothing here, so they get no rows.
 */
function noticesQuery(uid: string, at: Date) {
  const now = sql`${at.toISOString()}::timestamptz`;
  const since = Math.floor(at.getTime() / 60_000) - PACE_WINDOW_MINUTES;
  return sql`
    with subj as (
      select 'machine' as subject_kind, m.id as pack_id, m.name, m.region, array[m.id] as mids
        from machines m where m.owner_user_id = ${uid}::uuid and m.course_id is null
      union all
      select 'course', c.id, c.name, c.region, array(select cm.id from machines cm where cm.course_id = c.id)
        from courses c where c.owner_user_id = ${uid}::uuid and c.end_at > ${now}
    )
    select s.subject_kind, s.pack_id, s.name, s.region, lots.left_minutes, lots.last_expiry, used.recent, used.first_recent, used.older,
      (select json_agg(json_build_object('kind', a.kind, 'expiresAt', x.expires_at, 'minutes', x.minutes))
        from hour_alerts a
        left join lateral (select min(l.expires_at) as expires_at, sum(l.remaining)::int as minutes from ledger_lots l
            where l.machine_id = any(s.mids) and l.remaining > 0 and l.expires_at > ${now}
              and (l.id::text = a.ref or (extract(epoch from l.expires_at) * 1000)::bigint::text = a.ref)) x
          on a.kind = 'expiry-3d'
        where a.subject_id = s.pack_id
          and ((a.kind <> 'expiry-3d' and a.ref = lots.newest_lot) or (a.kind = 'expiry-3d' and x.minutes > 0))) as alerts
    from subj s
    cross join lateral (select coalesce(sum(l.remaining), 0)::int as left_minutes,
        (array_agg(l.id::text order by l.created_at desc, l.id desc))[1] as newest_lot,
        max(l.expires_at) filter (where l.remaining > 0) as last_expiry
      from ledger_lots l where l.machine_id = any(s.mids) and l.expires_at > ${now}) lots
    cross join lateral (select count(*) filter (where k.m >= ${since})::int as recent,
        min(k.m) filter (where k.m >= ${since}) as first_recent, bool_or(k.m < ${since}) as older
      from (select split_part(e.idempotency_key, ':', 3)::bigint as m from ledger_entries e
        where e.machine_id = any(s.mids) and e.kind = 'debit' and e.idempotency_key like 'meter:%') k) used`;
}

/**
 * When `leftMinutes` run out at the pace of `recent` minutes used over the last 7 days, or since the first use
 * (`firstRecent`, an epoch minute) when that is shorter (`older`: some use is older than the window). Null when
 * unused in the window or nothing is left.
 */
export function runOutAt(o: { at: Date; leftMinutes: number; recent: number; firstRecent: number | null; older: boolean }): Date | null {
  if (o.recent <= 0 || o.leftMinutes <= 0 || o.firstRecent === null) return null;
  const nowMinute = Math.floor(o.at.getTime() / 60_000);
  const window = o.older ? PACE_WINDOW_MINUTES : Math.max(1, nowMinute - o.firstRecent + 1);
  const perMinute = o.recent / window;
  return new Date(o.at.getTime() + Math.round((o.leftMinutes / perMinute) * 60_000));
}

const PRIORITY: HoursAlert['kind'][] = ['low-1h', 'expiry-3d', 'low-20'];

function alertText(kind: HoursAlert['kind'], name: string, region: string, a: { expiresAt: string | null; minutes: number | null }): string {
  if (kind === 'low-1h') return `Only 1 hour left on ${name}.`;
  if (kind === 'low-20') return `Only 20% of the hours are left on ${name}.`;
  const h = minutesToHours(Number(a.minutes ?? 0));
  return `${h} hour${h === 1 ? '' : 's'} on ${name} expire on ${formatCourseDate(a.expiresAt ?? 0, region)}.`;
}

export async function hoursNotices(db: Db, uid: string, at: Date): Promise<HoursNotice[]> {
  const rows = (await db.execute(noticesQuery(uid, at))).rows as unknown as Row[];
  return rows.map((r) => {
    const alerts = (typeof r.alerts === 'string' ? JSON.parse(r.alerts) : r.alerts ?? []) as Exclude<Row['alerts'], string | null>;
    const top = PRIORITY.map((k) => alerts.find((a) => a.kind === k)).find((a) => a !== undefined);
    let out = runOutAt({
      at,
      leftMinutes: Number(r.left_minutes),
      recent: Number(r.recent),
      firstRecent: r.first_recent === null ? null : Number(r.first_recent),
      older: r.older === true,
    });
    // Hours that expire before they run out: the expiry, not the pace, ends them.
    if (out && r.last_expiry && out.getTime() >= new Date(r.last_expiry).getTime()) out = null;
    return {
      packId: r.pack_id,
      runOutAt: out ? out.toISOString() : null,
      alert: top ? { kind: top.kind, text: alertText(top.kind, r.name, r.region, top) } : null,
    };
  });
}
