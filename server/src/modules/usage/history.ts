/**
 * Usage history (issue 22.4). A machine's runs are its metered minutes (ledger debits keyed
 * `meter:<machineId>:<epoch minute>`, one per minute it ran) grouped into unbroken stretches, so the history says
 * exactly what the hours were charged for. A course's student sessions are the desktop sessions its students opened
 * on its machines (connect_sessions).
 */
import { sql } from 'drizzle-orm';
import { USAGE_MAX_ROWS, type UsageAnswer } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { NotFound } from '../../errors';

const MINUTE_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const hours = (minutes: number) => Math.round((minutes / 60) * 100) / 100;

interface Scope {
  kind: 'machine' | 'course';
  name: string;
  region: string;
  machineIds: string[];
}

/** The caller's single machine, or a course they teach (by its id): its machines, else 404. */
async function scopeOf(q: Queryable, uid: string, packId: string): Promise<Scope> {
  if (!UUID.test(packId)) throw new NotFound('Machine not found.');
  const machine = await q.execute(sql`select name, region from machines where id = ${packId}::uuid and owner_user_id = ${uid}::uuid and course_id is null`);
  const m = machine.rows[0] as { name: string; region: string } | undefined;
  if (m) return { kind: 'machine', name: m.name, region: m.region, machineIds: [packId] };
  const course = await q.execute(sql`select c.name, c.region, coalesce(array_agg(m.id::text) filter (where m.id is not null), '{}') as ids
    from courses c left join machines m on m.course_id = c.id where c.id = ${packId}::uuid and c.owner_user_id = ${uid}::uuid group by c.id`);
  const c = course.rows[0] as { name: string; region: string; ids: string[] | string } | undefined;
  if (!c) throw new NotFound('Machine not found.');
  return { kind: 'course', name: c.name, region: c.region, machineIds: pgArray(c.ids) };
}

/** node-postgres parses text[]; PGlite may too, or hand back the literal. */
function pgArray(v: string[] | string): string[] {
  if (Array.isArray(v)) return v;
  return v.replace(/^\{|\}$/g, '').split(',').filter(Boolean);
}

const idList = (ids: string[]) => sql`array[${sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `)}]::uuid[]`;

/** Unbroken stretches of metered minutes per machine, newest first. */
async function runsOf(q: Queryable, machineIds: string[], now: Date): Promise<UsageAnswer['runs']> {
  if (!machineIds.length) return [];
  const res = await q.execute(sql`
    with minutes as (
      select l.machine_id, split_part(l.idempotency_key, ':', 3)::bigint as minute
        from ledger_entries l
        where l.machine_id = any(${idList(machineIds)}) and l.kind = 'debit' and l.idempotency_key like 'meter:%'
    ), islands as (
      select machine_id, minute, minute - row_number() over (partition by machine_id order by minute) as island from minutes
    )
    select m.name, min(i.minute) as first, max(i.minute) as last, count(*)::int as n, bool_or(m.observed = 'online') as running
      from islands i join machines m on m.id = i.machine_id
      group by m.name, i.machine_id, i.island
      order by min(i.minute) desc
      limit ${USAGE_MAX_ROWS}`);
  const nowMinute = Math.floor(now.getTime() / MINUTE_MS);
  return (res.rows as { name: string; first: string | number; last: string | number; n: number; running: boolean | null }[]).map((r) => {
    const last = Number(r.last);
    const ongoing = !!r.running && last >= nowMinute - 1;
    return {
      machineName: r.name,
      start: new Date(Number(r.first) * MINUTE_MS).toISOString(),
      end: ongoing ? null : new Date((last + 1) * MINUTE_MS).toISOString(),
      hours: hours(Number(r.n)),
    };
  });
}

/** Each student's desktop sessions on the course's machines (the instructor's own left out), newest first. */
async function studentSessions(q: Queryable, uid: string, machineIds: string[], now: Date): Promise<NonNullable<UsageAnswer['students']>> {
  if (!machineIds.length) return [];
  const res = await q.execute(sql`
    select u.email, m.name, s.opened_at, s.closed_at from connect_sessions s
      join users u on u.id = s.user_id join machines m on m.id = s.machine_id
      where s.machine_id = any(${idList(machineIds)}) and s.user_id <> ${uid}::uuid
      order by s.opened_at desc limit ${USAGE_MAX_ROWS}`);
  return (res.rows as { email: string; name: string; opened_at: string | Date; closed_at: string | Date | null }[]).map((r) => {
    const start = new Date(r.opened_at);
    const end = r.closed_at ? new Date(r.closed_at) : null;
    return {
      student: r.email,
      machineName: r.name,
      start: start.toISOString(),
      end: end?.toISOString() ?? null,
      hours: hours(((end ?? now).getTime() - start.getTime()) / MINUTE_MS),
    };
  });
}

/** The usage of the caller's machine, or of a course they teach (with its students' sessions). */
export async function usageOf(q: Queryable, uid: string, packId: string, now: Date): Promise<UsageAnswer> {
  const scope = await scopeOf(q, uid, packId);
  const runs = await runsOf(q, scope.machineIds, now);
  const answer: UsageAnswer = {
    machineName: scope.name,
    region: scope.region as UsageAnswer['region'],
    runs,
    totalHours: Math.round(runs.reduce((sum, r) => sum + r.hours, 0) * 100) / 100,
  };
  if (scope.kind === 'course') answer.students = await studentSessions(q, uid, scope.machineIds, now);
  return answer;
}
