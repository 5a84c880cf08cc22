import { addDays, courseTimeZone, dayInZone, endOfDay, isDay, MAX_STUDENTS, MIN_STUDENTS, startOfDay } from '@hyperdesk/contract';

/**
 * Course details as the business setup handles them. The date inputs pick days of the course's country (its time
 * zone, contract/src/dates.ts), whatever zone the browser is in: the course starts at the midnight that begins its
 * start day there and runs until the END of its end day there, so a one-day course is possible and the dates the
 * setup, the checkout, the invitation e-mail and the dashboards show are the days the user picked.
 */

export const REQUIRED = 'This field is required.';
export const STUDENTS_RANGE = `This field can have values between ${MIN_STUDENTS} and ${MAX_STUDENTS}.`;
export const END_BEFORE_START = 'The end date cannot be before the start date.';
export const START_TOO_LATE = 'The course must start within a year.';
export const TOO_LONG = 'A course can last at most one year.';

/** The server's limits on course dates (server/src/modules/courses/pricing.ts). */
const MAX_DAYS_AHEAD = 365;
const MAX_COURSE_DAYS = 365;

export { addDays };

/** Today (`YYYY-MM-DD`) in the course's country. */
export function todayIn(country: string, now = Date.now()): string {
  return dayInZone(now, courseTimeZone(country));
}

/** The instants of a course's days in its country: its start, the midnight its end day begins, and its end. */
export function courseSpan(course: { startDay: string; endDay: string }, country: string): { startDate: number; endDate: number; expiresAt: number } {
  const zone = courseTimeZone(country);
  return {
    startDate: startOfDay(course.startDay, zone) ?? NaN,
    endDate: startOfDay(course.endDay, zone) ?? NaN,
    expiresAt: endOfDay(course.endDay, zone) ?? NaN,
  };
}

/** What the summaries show and the result pages keep of a course (spec §3 stored order data). */
export function courseSummary(
  course: { studentsCount: number; startDay: string; endDay: string },
  country: string,
): { studentsCount: number; startDate: number; endDate: number } {
  const { startDate, endDate } = courseSpan(course, country);
  return { studentsCount: course.studentsCount, startDate, endDate };
}

export interface CourseInput {
  students: string;
  start: string;
  end: string;
}

export interface CourseErrors {
  students?: string;
  start?: string;
  end?: string;
}

/** Spec §5: students required and 1–40; the date range required with today (in the course's country) as its minimum. */
export function validateCourse(
  input: CourseInput,
  country: string,
  now = Date.now(),
): { errors: CourseErrors; value: { studentsCount: number; startDay: string; endDay: string } | null } {
  const errors: CourseErrors = {};
  const raw = input.students.trim();
  const students = Number(raw);
  if (!raw) errors.students = REQUIRED;
  else if (!Number.isInteger(students) || students < MIN_STUDENTS || students > MAX_STUDENTS) errors.students = STUDENTS_RANGE;

  // Days compare as YYYY-MM-DD strings.
  const today = todayIn(country, now);
  const start = isDay(input.start) ? input.start : null;
  const end = isDay(input.end) ? input.end : null;
  // A day before today cannot be picked (the inputs' min); typed in, it counts as not filled in (spec §5).
  if (start === null || start < today) errors.start = REQUIRED;
  else if (start > addDays(today, MAX_DAYS_AHEAD)) errors.start = START_TOO_LATE;
  if (end === null || end < today) errors.end = REQUIRED;
  else if (start !== null && !errors.start && end < start) errors.end = END_BEFORE_START;
  else if (start !== null && !errors.start && end > addDays(start, MAX_COURSE_DAYS - 1)) errors.end = TOO_LONG;

  const ok = !errors.students && !errors.start && !errors.end;
  return { errors, value: ok ? { studentsCount: students, startDay: start!, endDay: end! } : null };
}
