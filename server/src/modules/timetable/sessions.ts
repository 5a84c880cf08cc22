/**
 * A class session as the instructor writes it (contract ClassSessionFields) checked into what is stored, and back.
 * Every refusal says what to change (400).
 */
import {
  courseTimeZone,
  formatCourseDates,
  isDay,
  MAX_CLASS_MINUTES,
  type ClassSession,
  type ClassSessionFields,
} from '@hyperdesk/contract';
import { BadRequest } from '../../errors';
import { classesBetween, nextClass, weekdayBits, weekdaysOf, type CourseDates, type SessionTimes } from './occurrences';

const CLOCK = /^([01]\d|2[0-3]):([0-5]\d)$/;

export interface CourseForTimetable extends CourseDates {
  id: string;
  region: string;
}

/** Minutes past midnight of `HH:MM`, or a 400 naming the field. */
function minuteOf(value: string, field: 'start' | 'end'): number {
  const m = CLOCK.exec(value.trim());
  if (!m) throw new BadRequest(`The ${field} time must be written HH:MM (24-hour), e.g. 09:30.`, `class-${field}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

const hhmm = (minute: number) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

/** The stored times of a session (without id and course), or a 400 that says what is wrong. */
export function checkSession(f: ClassSessionFields, course: CourseForTimetable, now: Date): Omit<SessionTimes, 'id' | 'courseId'> {
  const timeZone = f.timeZone?.trim() || courseTimeZone(course.region);
  if (!isTimeZone(timeZone)) throw new BadRequest(`Unknown time zone "${timeZone}". Use a name like Europe/Berlin.`, 'class-zone');
  const startMinute = minuteOf(f.start, 'start');
  const endMinute = minuteOf(f.end, 'end');
  if (endMinute <= startMinute) throw new BadRequest('The class must end after it starts (on the same day).', 'class-order');
  if (endMinute - startMinute > MAX_CLASS_MINUTES) throw new BadRequest(`A class can last at most ${MAX_CLASS_MINUTES / 60} hours.`, 'class-length');
  let times: Omit<SessionTimes, 'id' | 'courseId'>;
  if (f.kind === 'weekly') {
    const days = [...new Set(f.days ?? [])];
    if (days.length === 0) throw new BadRequest('Choose at least one day of the week.', 'class-days');
    times = { kind: 'weekly', weekdays: weekdayBits(days), onDay: null, startMinute, endMinute, timeZone };
  } else {
    const day = (f.date ?? '').trim();
    if (!isDay(day)) throw new BadRequest('Choose the date of the class (YYYY-MM-DD).', 'class-date');
    times = { kind: 'once', weekdays: 0, onDay: day, startMinute, endMinute, timeZone };
  }
  const dates = formatCourseDates(course.startAt, course.endAt, course.region);
  const probe = { ...times, id: '', courseId: course.id };
  const inside = classesBetween(probe, course, course.startAt.getTime(), course.endAt.getTime() + 1);
  if (inside.length === 0) {
    throw new BadRequest(
      times.kind === 'once' ? `The class must be inside the course's dates (${dates}).` : `No class on these days falls inside the course's dates (${dates}).`,
      'class-outside-course',
    );
  }
  if (!nextClass(probe, course, now.getTime())) throw new BadRequest('This class is already over. Choose a later date or time.', 'class-past');
  return times;
}

/** A stored session as the contract shows it, with its next class. */
export function sessionJson(s: SessionTimes, course: CourseDates, now: Date): ClassSession {
  const next = nextClass(s, course, now.getTime());
  return {
    id: s.id,
    kind: s.kind,
    days: weekdaysOf(s.weekdays),
    date: s.onDay,
    start: hhmm(s.startMinute),
    end: hhmm(s.endMinute),
    timeZone: s.timeZone,
    next: next ? { startAt: next.startsAt.toISOString(), endAt: next.endsAt.toISOString() } : null,
  };
}
