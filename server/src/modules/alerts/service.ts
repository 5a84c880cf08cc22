import { sql } from 'drizzle-orm';
import { formatCourseDate } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import type { Mailer, OutgoingMail } from '../mail/service';
import { minutesToHours } from '../wallet/service';

/**
 * Hours that speak up (issue 22.4): a mail (outbox) when 20% and when one hour of a single user's machine or of an
 * instructor's course are left, and 3 days before a lot of hours expires. Each alert is raised once: its row in
 * hour_alerts (migration 0765, key subject + kind + ref) is inserted in the same transaction as its mail, so a second
 * pass, a restart or a second server finds the key taken and queues nothing. Course alerts go to the course's owner
 * (the instructor), never to its students. A low-hours alert's ref is the newest live lot: after a top-up the hours
 * may speak up again.
 */
export type AlertKind = 'low-20' | 'low-1h' | 'expiry-3d';
export const EXPIRY_NOTICE_MS = 3 * 24 * 60 * 60_000;

export interface HourAlerts {
  /** One pass over every machine and course; answers how many alerts were raised (mails queued). */
  runOnce(): Promise<number>;
}

interface Subject {
  subject_kind: 'machine' | 'course';
  subject_id: string;
  user_id: string;
  email: string;
  name: string;
  left_minutes: number;
  total_minutes: number;
  newest_lot: string | null;
}
interface Expiring {
  subject_kind: 'machine' | 'course';
  subject_id: string;
  user_id: string;
  email: string;
  name: string;
  region: string;
  ref: string;
  expires_at: Date | string;
  minutes: number;
}

interface Due {
  subjectKind: 'machine' | 'course';
  subjectId: string;
  userId: string;
  email: string;
  name: string;
  kind: AlertKind;
  ref: string;
  mail: OutgoingMail;
}

const hours = (minutes: number) => `${minutesToHours(minutes)} hour${minutesToHours(minutes) === 1 ? '' : 's'}`;

/** The live lots of every single machine and every running course, with what is left and what was granted. */
function subjects(at: Date) {
  const now = sql`${at.toISOString()}::timestamptz`;
  return sql`
    select 'machine' as subject_kind, m.id as subject_id, u.id as user_id, u.email, m.name,
      t.left_minutes, t.total_minutes, t.newest_lot
    from machines m join users u on u.id = m.owner_user_id
    cross join lateral (select coalesce(sum(l.remaining), 0)::int as left_minutes,
        coalesce(sum(l.minutes + l.added), 0)::int as total_minutes,
        (array_agg(l.id::text order by l.created_at desc, l.id desc))[1] as newest_lot
      from ledger_lots l where l.machine_id = m.id and l.expires_at > ${now}) t
    where m.course_id is null and t.total_minutes > 0
    union all
    select 'course', c.id, u.id, u.email, c.name, t.left_minutes, t.total_minutes, t.newest_lot
    from courses c join users u on u.id = c.owner_user_id
    cross join lateral (select coalesce(sum(l.remaining), 0)::int as left_minutes,
        coalesce(sum(l.minutes + l.added), 0)::int as total_minutes,
        (array_agg(l.id::text order by l.created_at desc, l.id desc))[1] as newest_lot
      from ledger_lots l join machines m on m.id = l.machine_id
      where m.course_id = c.id and l.expires_at > ${now}) t
    where c.end_at > ${now} and t.total_minutes > 0`;
}

/** Lots with minutes left that expire within 3 days: per lot for a machine, per expiry instant for a course. */
function expiring(at: Date) {
  const now = sql`${at.toISOString()}::timestamptz`;
  const until = sql`${new Date(at.getTime() + EXPIRY_NOTICE_MS).toISOString()}::timestamptz`;
  return sql`
    select 'machine' as subject_kind, m.id as subject_id, u.id as user_id, u.email, m.name, m.region,
      l.id::text as ref, l.expires_at, l.remaining as minutes
    from ledger_lots l join machines m on m.id = l.machine_id join users u on u.id = m.owner_user_id
    where m.course_id is null and l.remaining > 0 and l.expires_at > ${now} and l.expires_at <= ${until}
    union all
    select 'course', c.id, u.id, u.email, c.name, c.region, (extract(epoch from l.expires_at) * 1000)::bigint::text,
      l.expires_at, sum(l.remaining)::int
    from ledger_lots l join machines m on m.id = l.machine_id join courses c on c.id = m.course_id
      join users u on u.id = c.owner_user_id
    where l.remaining > 0 and l.expires_at > ${now} and l.expires_at <= ${until}
    group by c.id, u.id, u.email, c.name, c.region, l.expires_at`;
}

function lowMails(s: Subject, publicUrl: string): Due[] {
  const left = Number(s.left_minutes);
  const total = Number(s.total_minutes);
  const ref = s.newest_lot ?? '-';
  const base = { subjectKind: s.subject_kind, subjectId: s.subject_id, userId: s.user_id, email: s.email, name: s.name, ref };
  const course = s.subject_kind === 'course';
  const buy = course
    ? 'When they are used up, the course machines stop.'
    : `Buy more hours: ${publicUrl}/setup`;
  const due: Due[] = [];
  if (left * 5 <= total) {
    const subject = course ? `20% of the hours of ${s.name} are left` : `20% of your hours on ${s.name} are left`;
    const text = course
      ? `Your course ${s.name} has ${hours(left)} left of ${hours(total)} (its machines together).\n\n${buy}\n`
      : `Your machine ${s.name} has ${hours(left)} left of ${hours(total)}.\n\n${buy}\n`;
    due.push({ ...base, kind: 'low-20', mail: { to: s.email, subject, text, kind: 'hours-low' } });
  }
  if (left <= 60 && total > 60) {
    const subject = `Only 1 hour left on ${s.name}`;
    const text = `${course ? 'Your course' : 'Your machine'} ${s.name} has ${hours(left)} left.\n\n${buy}\n`;
    due.push({ ...base, kind: 'low-1h', mail: { to: s.email, subject, text, kind: 'hours-low' } });
  }
  return due;
}

function expiryMail(e: Expiring): Due {
  const when = formatCourseDate(e.expires_at, e.region);
  const subject = `${hours(Number(e.minutes))} on ${e.name} expire on ${when}`;
  const text =
    e.subject_kind === 'course'
      ? `${hours(Number(e.minutes))} of your course ${e.name} are unused and expire on ${when}, when the course ends.\n`
      : `${hours(Number(e.minutes))} of a month's hours on your machine ${e.name} are unused and expire on ${when}. Unused hours do not carry forward.\n`;
  return {
    subjectKind: e.subject_kind,
    subjectId: e.subject_id,
    userId: e.user_id,
    email: e.email,
    name: e.name,
    kind: 'expiry-3d',
    ref: e.ref,
    mail: { to: e.email, subject, text, kind: 'hours-expiry' },
  };
}

export function createHourAlerts(deps: { db: Db; mailer: Mailer; clock: Clock; publicUrl: string }): HourAlerts {
  const { db, mailer, clock } = deps;

  /** The alert's row and its mail in one transaction; nothing when the key is taken (raised before). */
  const raise = (d: Due, at: Date) =>
    db.transaction(async (tx) => {
      const res = await tx.execute(sql`insert into hour_alerts (subject_kind, subject_id, kind, ref, user_id, machine_name, created_at)
        values (${d.subjectKind}, ${d.subjectId}::uuid, ${d.kind}, ${d.ref}, ${d.userId}::uuid, ${d.name}, ${at.toISOString()}::timestamptz)
        on conflict do nothing returning kind`);
      if (!res.rows.length) return 0;
      await mailer.enqueue(tx, d.mail);
      return 1;
    });

  return {
    async runOnce() {
      const at = clock.now();
      const low = (await db.execute(subjects(at))).rows as unknown as Subject[];
      const soon = (await db.execute(expiring(at))).rows as unknown as Expiring[];
      const due = [...low.flatMap((s) => lowMails(s, deps.publicUrl)), ...soon.map(expiryMail)];
      // Skip what was raised before without a transaction each (the insert still decides under races).
      const taken = new Set(
        ((await db.execute(sql`select subject_id::text || '|' || kind || '|' || ref as k from hour_alerts
          where subject_id in (${due.length ? sql.join(due.map((d) => sql`${d.subjectId}::uuid`), sql`, `) : sql`null`})`)).rows as { k: string }[]).map((r) => r.k),
      );
      let raised = 0;
      for (const d of due) if (!taken.has(`${d.subjectId}|${d.kind}|${d.ref}`)) raised += await raise(d, at);
      return raised;
    },
  };
}

/** The alerts pass, once a minute on the leader (like metering: the key makes any server safe, the leader saves work). */
export function hourAlertsJob(alerts: HourAlerts, isLeader: () => boolean): Job {
  return {
    name: 'hour-alerts',
    intervalMs: 60_000,
    runOnce: async () => {
      if (isLeader()) await alerts.runOnce();
    },
  };
}
