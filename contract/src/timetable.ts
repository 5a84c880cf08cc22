import { z } from 'zod';
import { dayInZone, formatCourseDate, formatCourseTime, courseTimeZone } from './dates';

/**
 * Class timetable (issue 22.1): the class sessions an instructor sets inside a course's dates, weekly on some days
 * or once on a date, each from `start` to `end` (HH:MM, 24-hour) on the wall clock of `timeZone` (an IANA zone; the
 * course's country's when left out). The leader's timetable job starts the course's machines before each class and
 * stops them after it; students and the instructor see the next class on the dashboard.
 */
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
export const Weekday = z.enum(WEEKDAYS);
export type Weekday = z.infer<typeof Weekday>;

/** At most this many sessions per course (weekly ones repeat, so a term needs few). */
export const MAX_CLASS_SESSIONS = 50;
/** A class lasts at least a minute and at most this long. */
export const MAX_CLASS_MINUTES = 12 * 60;

/** What the instructor sends to add or change a session (checked by the server with clear messages). */
export const ClassSessionFields = z.object({
  kind: z.enum(['weekly', 'once']),
  /** Weekly sessions: the days they repeat on. */
  days: z.array(Weekday).max(7).optional(),
  /** Once sessions: the day, YYYY-MM-DD. */
  date: z.string().max(10).optional(),
  start: z.string().max(5),
  end: z.string().max(5),
  /** IANA time zone of start and end; the course's country's when left out. */
  timeZone: z.string().max(64).optional(),
});
export type ClassSessionFields = z.infer<typeof ClassSessionFields>;

export const ClassAddBody = ClassSessionFields.extend({ packId: z.string().max(100) });
export type ClassAddBody = z.infer<typeof ClassAddBody>;
export const ClassChangeBody = ClassSessionFields.extend({ packId: z.string().max(100), id: z.string().max(100) });
export type ClassChangeBody = z.infer<typeof ClassChangeBody>;
export const ClassDeleteBody = z.object({ packId: z.string().max(100), id: z.string().max(100) });
export const ClassDeleteAnswer = z.object({ id: z.string() });

/** One class: ISO instants. */
export const ClassTime = z.object({ startAt: z.string(), endAt: z.string() });
export type ClassTime = z.infer<typeof ClassTime>;

export const ClassSession = z.object({
  id: z.string(),
  kind: z.enum(['weekly', 'once']),
  days: z.array(Weekday),
  date: z.string().nullable(),
  start: z.string(),
  end: z.string(),
  timeZone: z.string(),
  /** The session's next class that has not ended (null when none is left inside the course's dates). */
  next: ClassTime.nullable(),
});
export type ClassSession = z.infer<typeof ClassSession>;

/** GET /v1/pack/timetable?packId=: the course's sessions (the instructor only). */
export const TimetableQuery = z.object({ packId: z.string().max(100) });
export const TimetableAnswer = z.object({
  packId: z.string(),
  /** The course's time zone (its country's): the default of new sessions and the zone dates are shown in. */
  timeZone: z.string(),
  /** The course's dates, ISO. */
  startAt: z.string(),
  endAt: z.string(),
  sessions: z.array(ClassSession),
  /** The course's next class that has not ended, across its sessions. */
  next: ClassTime.nullable(),
  /** How long before a class its machines are started (the provider's start time plus a margin), in minutes. */
  warmMinutes: z.number(),
});
export type TimetableAnswer = z.infer<typeof TimetableAnswer>;

/** GET /v1/user/classes: the next class of each course the user teaches or is a student of. */
export const NextClass = ClassTime.extend({ packId: z.string() });
export type NextClass = z.infer<typeof NextClass>;
export const NextClassesAnswer = z.object({ classes: z.array(NextClass) });
export type NextClassesAnswer = z.infer<typeof NextClassesAnswer>;

/** `Wed 25 Nov '26, 09:00–10:50`: a class in the course's country's time zone (the one date formatter, ./dates). */
export function formatClassTime(startAt: Date | string | number, endAt: Date | string | number, region: string): string {
  const day = dayInZone(startAt, courseTimeZone(region));
  if (!day) return '';
  const weekday = WEEKDAYS[(new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7];
  const sameDay = day === dayInZone(endAt, courseTimeZone(region));
  const end = sameDay ? formatCourseTime(endAt, region) : `${formatCourseDate(endAt, region)}, ${formatCourseTime(endAt, region)}`;
  return `${weekday} ${formatCourseDate(startAt, region)}, ${formatCourseTime(startAt, region)}–${end}`;
}

/** `Every Mon, Wed · 09:00–10:50` or `Once on 25 Nov '26 · 09:00–10:50`, plus the zone when it is not the course's. */
export function describeClassSession(s: Pick<ClassSession, 'kind' | 'days' | 'date' | 'start' | 'end' | 'timeZone'>, region: string): string {
  const when = s.kind === 'weekly' ? `Every ${s.days.join(', ')}` : `Once on ${s.date ? formatDay(s.date) : ''}`;
  const zone = s.timeZone === courseTimeZone(region) ? '' : ` (${s.timeZone})`;
  return `${when} · ${s.start}–${s.end}${zone}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `YYYY-MM-DD` as spec §9's `DD Mon 'YY` (a calendar day: no zone involved). */
function formatDay(day: string): string {
  const [y, m, d] = day.split('-');
  return `${d} ${MONTHS[Number(m) - 1] ?? ''} '${(y ?? '').slice(-2)}`;
}
