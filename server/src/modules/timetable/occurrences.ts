/**
 * When a class session's classes happen: pure calendar arithmetic on the session's wall clock (its time zone), so a
 * weekly 09:00 class stays at 09:00 across a DST change. A class counts only when it lies wholly inside the course's
 * dates.
 */
import { addDays, dayInZone, instantAt, WEEKDAYS, type Weekday } from '@hyperdesk/contract';

export interface SessionTimes {
  id: string;
  courseId: string;
  kind: 'weekly' | 'once';
  /** Bit 0 = Monday … bit 6 = Sunday. */
  weekdays: number;
  onDay: string | null;
  startMinute: number;
  endMinute: number;
  timeZone: string;
}

export interface CourseDates {
  startAt: Date;
  endAt: Date;
}

/**
 * A row of `class_sessions s join courses c` read raw (s.id, s.course_id, s.kind, s.weekdays, s.on_day,
 * s.start_minute, s.end_minute, s.time_zone, c.start_at, c.end_at) as the session's times and its course's dates.
 */
export function sessionFromRow(r: Record<string, unknown>): { session: SessionTimes; course: CourseDates } {
  return {
    session: {
      id: String(r.id),
      courseId: String(r.course_id),
      kind: r.kind as SessionTimes['kind'],
      weekdays: Number(r.weekdays),
      onDay: (r.on_day as string | null) ?? null,
      startMinute: Number(r.start_minute),
      endMinute: Number(r.end_minute),
      timeZone: String(r.time_zone),
    },
    course: { startAt: new Date(r.start_at as string), endAt: new Date(r.end_at as string) },
  };
}

/** One class of a session. */
export interface Occurrence {
  sessionId: string;
  courseId: string;
  startsAt: Date;
  endsAt: Date;
}

const DAY_MS = 86_400_000;

export const weekdayBits = (days: readonly Weekday[]) => days.reduce((bits, d) => bits | (1 << WEEKDAYS.indexOf(d)), 0);
export const weekdaysOf = (bits: number): Weekday[] => WEEKDAYS.filter((_, i) => bits & (1 << i));
/** Monday = 0 … Sunday = 6 of a calendar day `YYYY-MM-DD`. */
const weekdayIndex = (day: string) => (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;

/** The session's class on `day`, if it has one that day inside the course's dates. */
function classOn(s: SessionTimes, course: CourseDates, day: string): Occurrence | null {
  if (s.kind === 'once' ? s.onDay !== day : !(s.weekdays & (1 << weekdayIndex(day)))) return null;
  const start = instantAt(day, s.startMinute, s.timeZone);
  const end = instantAt(day, s.endMinute, s.timeZone);
  if (start === null || end === null || end <= start) return null;
  if (start < course.startAt.getTime() || end > course.endAt.getTime() + 1) return null;
  return { sessionId: s.id, courseId: s.courseId, startsAt: new Date(start), endsAt: new Date(end) };
}

/** The session's classes that overlap [from, to) (epoch ms), in time order. */
export function classesBetween(s: SessionTimes, course: CourseDates, from: number, to: number): Occurrence[] {
  const out: Occurrence[] = [];
  if (s.kind === 'once') {
    const c = s.onDay ? classOn(s, course, s.onDay) : null;
    if (c && c.endsAt.getTime() > from && c.startsAt.getTime() < to) out.push(c);
    return out;
  }
  const last = dayInZone(to + DAY_MS, s.timeZone);
  for (let day = dayInZone(from - DAY_MS, s.timeZone); day && day <= last; day = addDays(day, 1)) {
    const c = classOn(s, course, day);
    if (c && c.endsAt.getTime() > from && c.startsAt.getTime() < to) out.push(c);
  }
  return out;
}

/** The session's first class that has not ended at `now` (ms), or null when none is left inside the course's dates. */
export function nextClass(s: SessionTimes, course: CourseDates, now: number): Occurrence | null {
  if (s.kind === 'once') {
    const c = s.onDay ? classOn(s, course, s.onDay) : null;
    return c && c.endsAt.getTime() > now ? c : null;
  }
  const from = Math.max(now, course.startAt.getTime());
  const last = dayInZone(course.endAt.getTime() + DAY_MS, s.timeZone);
  for (let day = dayInZone(from - DAY_MS, s.timeZone); day && day <= last; day = addDays(day, 1)) {
    const c = classOn(s, course, day);
    if (c && c.endsAt.getTime() > now) return c;
  }
  return null;
}

/** The earliest of several next classes. */
export function earliest(classes: (Occurrence | null)[]): Occurrence | null {
  let best: Occurrence | null = null;
  for (const c of classes) if (c && (!best || c.startsAt < best.startsAt)) best = c;
  return best;
}
