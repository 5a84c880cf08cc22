/**
 * The course rows of the wallet balance (spec §3, §6): one INSTRUCTOR entry per course the caller owns and one
 * STUDENT entry per running course whose roster has the caller's e-mail. The wallet's balance builder appends them
 * to the caller's SINGLE entries. (Spec §6: the client skips instructor entries after the first when it builds
 * its machine list; the server answers one entry per course and leaves that rule to the client.)
 */
import { sql, type SQL } from 'drizzle-orm';
import { INSTRUCTOR_STATIC_CONFIG, PLATFORMS, type BalanceEntry, type InstanceStatus, type MachineConfig } from '@hyperdesk/contract';
import type { Principal } from '../identity/tokens';
import { liveLeftByMachine } from '../ledger/service';
import { COURSE_ENDED } from './service';
import { SEAT_STALE_MS } from './seats';

/** Instructors keep seeing a course for this long after it ended (to read its seats and hours). */
export const ENDED_COURSE_VISIBLE_MS = 30 * 24 * 60 * 60 * 1000;

interface CourseRow {
  id: string;
  role: 'INSTRUCTOR' | 'STUDENT';
  name: string;
  region: string;
  platform: string;
  vms: number;
  hoursPerMachine: number;
  startAt: Date;
  endAt: Date;
  rosterSize: number;
  machines: MachineRow[];
}
interface MachineRow {
  name: string;
  observed: InstanceStatus;
  processingSince: Date | null;
  stopReason: string | null;
  leftMinutes: number;
  /** Instructor rows only: the e-mail of the student holding the seat now. */
  student: string | null;
}

export const courseConnectUrl = (courseId: string) => `/v1/slot/connect?packId=${courseId}`;

/** online if any machine is online, else processing if any is, else offline. */
export function aggregateStatus(list: readonly { observed: InstanceStatus }[]): InstanceStatus {
  if (list.some((m) => m.observed === 'online')) return 'online';
  if (list.some((m) => m.observed === 'processing')) return 'processing';
  return 'offline';
}

function platformConfig(platform: string): MachineConfig {
  const p = PLATFORMS.find((x) => x.name === platform) ?? PLATFORMS[0]!;
  return { platform: p.name, cpu: p.cpu, cores: p.cpu_cores, ram: p.ram, gpu: p.gpu, gpu_ram: p.gpu_ram };
}

const hours = (minutes: number) => Math.round((minutes / 60) * 100) / 100;

/**
 * The caller's courses, as instructor (ended less than ENDED_COURSE_VISIBLE_MS ago) and as student (running, the
 * caller's e-mail on the roster, not their own), each with its machines (by seat number, with the lot remainders
 * from the ledger and, for instructors, who sits where) and roster size, as ONE JSON array whatever the machines per
 * course or minutes used: a scalar select the wallet embeds in its balance statement. Instructor courses first, each
 * group by start.
 */
export function coursesWithMachinesJson(principal: Principal, at: Date): SQL {
  const now = at.toISOString();
  return sql`
    with mine as (
      select c.*, 'INSTRUCTOR' as role, 0 as rank from courses c
        where c.owner_user_id = ${principal.uid}::uuid and c.end_at > ${new Date(at.getTime() - ENDED_COURSE_VISIBLE_MS).toISOString()}::timestamptz
      union all
      select c.*, 'STUDENT' as role, 1 as rank from roster r join courses c on c.id = r.course_id
        where r.email = ${principal.email.trim().toLowerCase()} and c.end_at > ${now}::timestamptz and c.owner_user_id <> ${principal.uid}::uuid
          and ${principal.emailVerified} -- STUDENT entries only for a proven address (issue 11.2)
    )
    select coalesce(json_agg(json_build_object('id', c.id, 'role', c.role, 'name', c.name, 'region', c.region,
      'platform', c.platform, 'vms', c.vms, 'hoursPerMachine', c.hours_per_machine, 'startAt', c.start_at, 'endAt', c.end_at,
      'rosterSize', case when c.role = 'INSTRUCTOR' then (select count(*) from roster r where r.course_id = c.id) else 0 end,
      'machines', coalesce((
        select json_agg(json_build_object(
            'name', m.name, 'observed', m.observed, 'processingSince', m.processing_since, 'stopReason', m.stop_reason,
            'leftMinutes', coalesce(t.left_minutes, 0), 'student', case when c.role = 'INSTRUCTOR' then su.email end
          ) order by m.seq)
        from machines m
        left join ${liveLeftByMachine(sql`select cm.id from machines cm where cm.course_id = c.id`, at)} t on t.machine_id = m.id
        left join (seats s join users su on su.id = s.user_id)
          on s.machine_id = m.id and s.last_seen_at >= ${new Date(at.getTime() - SEAT_STALE_MS).toISOString()}::timestamptz
        where m.course_id = c.id), '[]')
      ) order by c.rank, c.start_at, c.created_at), '[]')
    from mine c`;
}

/** Reads the array selected by coursesWithMachinesJson. */
export function readCourses(json: unknown): CourseRow[] {
  return (json as Record<string, unknown>[]).map((r) => ({
    id: String(r.id),
    role: r.role as CourseRow['role'],
    name: String(r.name),
    region: String(r.region),
    platform: String(r.platform),
    vms: Number(r.vms),
    hoursPerMachine: Number(r.hoursPerMachine),
    startAt: new Date(r.startAt as string),
    endAt: new Date(r.endAt as string),
    rosterSize: Number(r.rosterSize),
    machines: (r.machines as Record<string, unknown>[]).map((m) => ({
      name: String(m.name),
      observed: m.observed as InstanceStatus,
      processingSince: m.processingSince ? new Date(m.processingSince as string) : null,
      stopReason: (m.stopReason as string | null) ?? null,
      leftMinutes: Number(m.leftMinutes),
      student: (m.student as string | null) ?? null,
    })),
  }));
}

/**
 * timeLeft of a course is the MINIMUM left across its machines: the runtime every seat still has (the first seat
 * to run out stops there). 0 once the course has ended (its hours expired with it).
 */
function minutesLeft(course: CourseRow, at: Date): number {
  if (at >= course.endAt || course.machines.length === 0) return 0;
  return Math.min(...course.machines.map((m) => m.leftMinutes));
}

function baseEntry(course: CourseRow, at: Date) {
  const list = course.machines;
  const status = aggregateStatus(list);
  const processing = list.filter((m) => m.observed === 'processing' && m.processingSince).map((m) => m.processingSince!.getTime());
  const reason = at >= course.endAt ? COURSE_ENDED : status === 'offline' ? (list.find((m) => m.stopReason)?.stopReason ?? null) : null;
  return {
    platform: course.platform as BalanceEntry['platform'],
    packId: course.id,
    machineName: course.name,
    timeLeft: hours(minutesLeft(course, at)),
    totalHours: course.hoursPerMachine,
    vms: course.vms,
    instanceStatus: status,
    url: courseConnectUrl(course.id),
    startDate: course.startAt.toISOString(),
    endDate: course.endAt.toISOString(),
    region: course.region as BalanceEntry['region'],
    stopReason: reason,
    processingSince: status === 'processing' && processing.length ? new Date(Math.min(...processing)).toISOString() : null,
  };
}

/** The caller's INSTRUCTOR and STUDENT entries from their courses, instructor ones first, each group by course start. */
export function courseEntries(courses: readonly CourseRow[], at: Date): BalanceEntry[] {
  return courses.map((course): BalanceEntry =>
    course.role === 'INSTRUCTOR'
      ? {
          role: 'INSTRUCTOR',
          ...baseEntry(course, at),
          machineConfig: { ...INSTRUCTOR_STATIC_CONFIG },
          seats: course.machines.map((m) => ({ machineName: m.name, instanceStatus: m.observed, student: m.student })),
          rosterSize: course.rosterSize,
        }
      : { role: 'STUDENT', ...baseEntry(course, at), machineConfig: platformConfig(course.platform) },
  );
}

/** The wallet's balance builder for course entries (wallet/service BalanceBuilder). */
export const courseBalance = () => ({
  select: (principal: Principal, at: Date): SQL => coursesWithMachinesJson(principal, at),
  entries: (json: unknown, at: Date): BalanceEntry[] => courseEntries(readCourses(json), at),
});
