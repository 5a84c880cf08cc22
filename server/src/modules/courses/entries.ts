/**
 * The course rows of the wallet balance (spec §3, §6): one INSTRUCTOR entry per course the caller owns and one
 * STUDENT entry per running course whose roster has the caller's e-mail. The wallet's balance builder appends them
 * to the caller's SINGLE entries. (Spec §6: the client skips instructor entries after the first when it builds
 * its machine list; the server answers one entry per course and leaves that rule to the client.)
 */
import { and, asc, count, eq, gt, inArray } from 'drizzle-orm';
import { INSTRUCTOR_STATIC_CONFIG, PLATFORMS, type BalanceEntry, type InstanceStatus, type MachineConfig } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { courses, machines, roster } from '../../db/schema/index';
import type { Principal } from '../identity/tokens';
import { COURSE_ENDED } from './service';
import { seatHolders } from './seats';

/** Instructors keep seeing a course for this long after it ended (to read its seats and hours). */
export const ENDED_COURSE_VISIBLE_MS = 30 * 24 * 60 * 60 * 1000;

export interface RemainingLedger {
  remainingMinutes(q: Queryable, machineId: string, at: Date): Promise<number>;
}

type CourseRow = typeof courses.$inferSelect;
type MachineRow = Pick<typeof machines.$inferSelect, 'id' | 'courseId' | 'name' | 'observed' | 'processingSince' | 'stopReason' | 'seq'>;

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
 * timeLeft of a course is the MINIMUM left across its machines: the runtime every seat still has (the first seat
 * to run out stops there). 0 once the course has ended (its hours expired with it).
 */
async function minutesLeft(q: Queryable, ledger: RemainingLedger, list: MachineRow[], course: CourseRow, at: Date): Promise<number> {
  if (at >= course.endAt || list.length === 0) return 0;
  let min = Infinity;
  for (const m of list) min = Math.min(min, await ledger.remainingMinutes(q, m.id, at));
  return min;
}

function baseEntry(course: CourseRow, list: MachineRow[], left: number, at: Date) {
  const status = aggregateStatus(list);
  const processing = list.filter((m) => m.observed === 'processing' && m.processingSince).map((m) => m.processingSince!.getTime());
  const reason = at >= course.endAt ? COURSE_ENDED : status === 'offline' ? (list.find((m) => m.stopReason)?.stopReason ?? null) : null;
  return {
    platform: course.platform as BalanceEntry['platform'],
    packId: course.id,
    machineName: course.name,
    timeLeft: hours(left),
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

async function machinesOf(q: Queryable, courseIds: string[]): Promise<Map<string, MachineRow[]>> {
  const by = new Map<string, MachineRow[]>();
  if (courseIds.length === 0) return by;
  const rows = await q
    .select({
      id: machines.id,
      courseId: machines.courseId,
      name: machines.name,
      observed: machines.observed,
      processingSince: machines.processingSince,
      stopReason: machines.stopReason,
      seq: machines.seq,
    })
    .from(machines)
    .where(inArray(machines.courseId, courseIds))
    .orderBy(asc(machines.seq));
  for (const r of rows) by.set(r.courseId!, [...(by.get(r.courseId!) ?? []), r]);
  return by;
}

/** The caller's INSTRUCTOR and STUDENT entries, instructor ones first, each group by course start. */
export async function courseEntries(q: Queryable, ledger: RemainingLedger, principal: Principal, at: Date): Promise<BalanceEntry[]> {
  const owned = await q
    .select()
    .from(courses)
    .where(and(eq(courses.ownerUserId, principal.uid), gt(courses.endAt, new Date(at.getTime() - ENDED_COURSE_VISIBLE_MS))))
    .orderBy(asc(courses.startAt), asc(courses.createdAt));
  const studying = (
    await q
      .select({ course: courses })
      .from(roster)
      .innerJoin(courses, eq(courses.id, roster.courseId))
      .where(and(eq(roster.email, principal.email.trim().toLowerCase()), gt(courses.endAt, at)))
      .orderBy(asc(courses.startAt), asc(courses.createdAt))
  )
    .map((r) => r.course)
    .filter((c) => c.ownerUserId !== principal.uid);

  const all = [...owned, ...studying];
  const byCourse = await machinesOf(q, all.map((c) => c.id));
  const holders = await seatHolders(q, owned.map((c) => c.id), at);
  const sizes = new Map(
    owned.length
      ? (
          await q
            .select({ courseId: roster.courseId, n: count() })
            .from(roster)
            .where(inArray(roster.courseId, owned.map((c) => c.id)))
            .groupBy(roster.courseId)
        ).map((r) => [r.courseId, Number(r.n)])
      : [],
  );
  const out: BalanceEntry[] = [];
  for (const course of owned) {
    const list = byCourse.get(course.id) ?? [];
    out.push({
      role: 'INSTRUCTOR',
      ...baseEntry(course, list, await minutesLeft(q, ledger, list, course, at), at),
      machineConfig: { ...INSTRUCTOR_STATIC_CONFIG },
      seats: list.map((m) => ({ machineName: m.name, instanceStatus: m.observed, student: holders.get(m.id) ?? null })),
      rosterSize: sizes.get(course.id) ?? 0,
    });
  }
  for (const course of studying) {
    const list = byCourse.get(course.id) ?? [];
    out.push({
      role: 'STUDENT',
      ...baseEntry(course, list, await minutesLeft(q, ledger, list, course, at), at),
      machineConfig: platformConfig(course.platform),
    });
  }
  return out;
}

/** The wallet's balance builder for course entries. */
export const courseBalance =
  (ledger: RemainingLedger) =>
  (q: Queryable, principal: Principal, at: Date): Promise<BalanceEntry[]> =>
    courseEntries(q, ledger, principal, at);
