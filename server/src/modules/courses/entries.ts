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
import { createMachinesParts, partKey, type MachinesPart, type MachinesParts } from './machines-part';

/** Instructors keep seeing a course for this long after it ended (to read its seats and hours). */
export const ENDED_COURSE_VISIBLE_MS = 30 * 24 * 60 * 60 * 1000;

/** One course as the balance statement gives it. */
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
  /** The course's newest machine version. */
  version: string;
  /** Instructor rows only: seat number → e-mail of the student sitting there now. */
  seated: Map<number, string>;
  /** Null when the reader sent this course's current version (it holds the part). */
  machines: MachinesPart | null;
}

export const courseConnectUrl = (courseId: string) => `/v1/slot/connect?packId=${courseId}`;

function platformConfig(platform: string): MachineConfig {
  const p = PLATFORMS.find((x) => x.name === platform) ?? PLATFORMS[0]!;
  return { platform: p.name, cpu: p.cpu, cores: p.cpu_cores, ram: p.ram, gpu: p.gpu, gpu_ram: p.gpu_ram };
}

const hours = (minutes: number) => Math.round((minutes / 60) * 100) / 100;

/**
 * A course's machines folded into what its entry shows (machines-part.ts): the least minutes left (the ledger's lot
 * remainders), the course state, the earliest processing start, the first stop reason, when the first lot runs out,
 * each machine's seat number, name and state, and the least minutes granted to a machine.
 */
function machinesPartJson(courseId: SQL, at: Date): SQL {
  return sql`select json_build_array(coalesce(min(coalesce(t.left_minutes, 0)), 0),
      case when bool_or(m.observed = 'online') then 'online' when bool_or(m.observed = 'processing') then 'processing'
        else 'offline' end,
      min(m.processing_since) filter (where m.observed = 'processing'),
      (array_agg(m.stop_reason order by m.seq) filter (where m.stop_reason is not null))[1],
      min(t.next_expiry),
      coalesce(json_agg(json_build_array(m.seq, m.name, m.observed, m.id) order by m.seq), '[]'),
      coalesce(min(coalesce(t.granted_minutes, 0)), 0))
    from machines m
    left join ${liveLeftByMachine(sql`select cm.id from machines cm where cm.course_id = ${courseId}`, at)} t on t.machine_id = m.id
    where m.course_id = ${courseId}`;
}

/**
 * The caller's courses, as instructor (ended less than ENDED_COURSE_VISIBLE_MS ago) and as student (running, the
 * caller's e-mail on the roster, not their own), as ONE JSON array of arrays whatever the machines per course or
 * minutes used: a scalar select the wallet embeds in its balance statement. Per course: its columns, roster size,
 * newest machine version (an index lookup), for instructors who sits where now, and its machines' part unless
 * `held` (comma-separated partKey) names that very version. Instructor courses first, each group by start.
 */
export function coursesWithMachinesJson(principal: Principal, at: Date, held: string): SQL {
  const now = at.toISOString();
  return sql`
    with mine as (
      select c.id, c.name, c.region, c.platform, c.vms, c.hours_per_machine, c.start_at, c.end_at, c.created_at,
          'INSTRUCTOR' as role, 0 as rank, (select count(*) from roster r where r.course_id = c.id) as roster_size
        from courses c
        where c.owner_user_id = ${principal.uid}::uuid and c.end_at > ${new Date(at.getTime() - ENDED_COURSE_VISIBLE_MS).toISOString()}::timestamptz
      union all
      select c.id, c.name, c.region, c.platform, c.vms, c.hours_per_machine, c.start_at, c.end_at, c.created_at,
          'STUDENT' as role, 1 as rank, 0 as roster_size
        from roster r join courses c on c.id = r.course_id
        where r.email = ${principal.email.trim().toLowerCase()} and c.end_at > ${now}::timestamptz and c.owner_user_id <> ${principal.uid}::uuid
          and ${principal.emailVerified} -- STUDENT entries only for a proven address (issue 11.2)
    )
    select coalesce(json_agg(json_build_array(c.id, c.role, c.name, c.region, c.platform, c.vms, c.hours_per_machine,
        c.start_at, c.end_at, c.roster_size, k.v::text,
        case when c.role = 'INSTRUCTOR' then (
          select json_agg(json_build_array(m.seq, su.email)) from seats s
            join users su on su.id = s.user_id join machines m on m.id = s.machine_id
            where s.course_id = c.id and s.last_seen_at >= ${new Date(at.getTime() - SEAT_STALE_MS).toISOString()}::timestamptz) end,
        case when c.id::text || ':' || k.v::text = any(string_to_array(${held}, ',')) then null
          else (${machinesPartJson(sql`c.id`, at)}) end)
      order by c.rank, c.start_at, c.created_at), '[]')
    from mine c cross join lateral (select coalesce(max(m.state_v), 0) as v from machines m where m.course_id = c.id) k`;
}

const dateOrNull = (v: unknown) => (v ? new Date(v as string) : null);

function readMachinesPart(r: unknown[] | null): MachinesPart | null {
  if (!r) return null;
  return {
    leftMinutes: Number(r[0]),
    status: r[1] as InstanceStatus,
    processingSince: dateOrNull(r[2]),
    stopReason: (r[3] as string | null) ?? null,
    nextExpiry: dateOrNull(r[4]),
    machines: (r[5] as unknown[][]).map((m) => ({ seq: Number(m[0]), name: String(m[1]), observed: m[2] as InstanceStatus, id: String(m[3]) })),
    grantedMinutes: Number(r[6] ?? 0),
  };
}

/** Reads the array selected by coursesWithMachinesJson. */
export function readCourses(json: unknown): CourseRow[] {
  return (json as unknown[][]).map((r) => ({
    id: String(r[0]),
    role: r[1] as CourseRow['role'],
    name: String(r[2]),
    region: String(r[3]),
    platform: String(r[4]),
    vms: Number(r[5]),
    hoursPerMachine: Number(r[6]),
    startAt: new Date(r[7] as string),
    endAt: new Date(r[8] as string),
    rosterSize: Number(r[9]),
    version: String(r[10]),
    seated: new Map(((r[11] as [number, string][] | null) ?? []).map(([seq, email]) => [Number(seq), email])),
    machines: readMachinesPart(r[12] as unknown[] | null),
  }));
}

/**
 * timeLeft of a course is the MINIMUM left across its machines: the runtime every seat still has (the first seat
 * to run out stops there). 0 once the course has ended (its hours expired with it). totalHours is the hours bought
 * per machine, or more where an operator added hours to every machine (the least granted to one machine): never
 * below timeLeft, so the dashboard never reads "11.4 of 10 hours left".
 */
function baseEntry(course: CourseRow, part: MachinesPart, at: Date) {
  const ended = at >= course.endAt;
  const status = part.status;
  return {
    platform: course.platform as BalanceEntry['platform'],
    packId: course.id,
    machineName: course.name,
    timeLeft: ended ? 0 : hours(part.leftMinutes),
    totalHours: Math.max(course.hoursPerMachine, hours(part.grantedMinutes)),
    vms: course.vms,
    instanceStatus: status,
    url: courseConnectUrl(course.id),
    startDate: course.startAt.toISOString(),
    endDate: course.endAt.toISOString(),
    region: course.region as BalanceEntry['region'],
    stopReason: ended ? COURSE_ENDED : status === 'offline' ? part.stopReason : null,
    processingSince: status === 'processing' && part.processingSince ? part.processingSince.toISOString() : null,
  };
}

/** One INSTRUCTOR or STUDENT entry from a course and its machines' part. */
export function courseEntry(course: CourseRow, part: MachinesPart, at: Date): BalanceEntry {
  if (course.role === 'STUDENT') return { role: 'STUDENT', ...baseEntry(course, part, at), machineConfig: platformConfig(course.platform) };
  return {
    role: 'INSTRUCTOR',
    ...baseEntry(course, part, at),
    machineConfig: { ...INSTRUCTOR_STATIC_CONFIG },
    seats: part.machines.map((m) => ({ machineId: m.id, machineName: m.name, instanceStatus: m.observed, student: course.seated.get(m.seq) ?? null })),
    rosterSize: course.rosterSize,
  };
}

/**
 * The wallet's balance builder for course entries (wallet/service BalanceBuilder), keeping each course's machines
 * part between reads (machines-part.ts). The parts a read names are taken from the store when its statement is
 * built, so a part dropped from the store meanwhile is still there when the answer comes.
 */
export function courseBalance(parts: MachinesParts = createMachinesParts()) {
  return {
    read: (principal: Principal, at: Date) => {
      const held = parts.heldFor(principal.uid, at);
      const keys = [...held].map(([id, kept]) => partKey(id, kept.version)).join(',');
      return {
        select: coursesWithMachinesJson(principal, at, keys),
        entries: (json: unknown): BalanceEntry[] => {
          const courses = readCourses(json);
          parts.read(principal.uid, courses.map((c) => c.id));
          return courses.map((course) => {
            const part = course.machines ?? held.get(course.id)?.part;
            if (!part) throw new Error(`balance: no machines part for course ${course.id}`);
            if (course.machines) parts.keep(course.id, course.version, course.machines);
            return courseEntry(course, part, at);
          });
        },
      };
    },
  };
}
