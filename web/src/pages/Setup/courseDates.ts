import { MAX_STUDENTS, MIN_STUDENTS } from '@hyperdesk/contract';

/**
 * Course details as the business setup handles them: dates are the local midnight of the chosen day (what a date
 * input means), and the course runs until the END of its end day, so a one-day course is possible and the end
 * date shown everywhere is the day the user picked.
 */

export const REQUIRED = 'This field is required.';
export const STUDENTS_RANGE = `This field can have values between ${MIN_STUDENTS} and ${MAX_STUDENTS}.`;
export const END_BEFORE_START = 'The end date cannot be before the start date.';
export const START_TOO_LATE = 'The course must start within a year.';
export const TOO_LONG = 'A course can last at most one year.';

/** The server's limits on course dates (server/src/modules/courses/pricing.ts). */
const MAX_DAYS_AHEAD = 365;
const MAX_COURSE_DAYS = 365;

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of a moment, in local time (a date input's value). */
export function toInputDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Local midnight of a date input's value, or null when it is not a real date. */
export function fromInputDate(value: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  const date = new Date(y, mo, d);
  return date.getFullYear() === y && date.getMonth() === mo && date.getDate() === d ? date.getTime() : null;
}

export function addDays(ms: number, days: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + days).getTime();
}

export function todayStart(now = Date.now()): number {
  return addDays(now, 0);
}

/** ExpiresAt of the order: the last millisecond of the end day (hours expire when the course ends). */
export function courseEndsAt(endDate: number): number {
  return addDays(endDate, 1) - 1;
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

/** Spec §5: students required and 1–40; the date range required with today as its minimum. */
export function validateCourse(input: CourseInput, now = Date.now()): { errors: CourseErrors; value: { studentsCount: number; startDate: number; endDate: number } | null } {
  const errors: CourseErrors = {};
  const raw = input.students.trim();
  const students = Number(raw);
  if (!raw) errors.students = REQUIRED;
  else if (!Number.isInteger(students) || students < MIN_STUDENTS || students > MAX_STUDENTS) errors.students = STUDENTS_RANGE;

  const today = todayStart(now);
  const start = fromInputDate(input.start);
  const end = fromInputDate(input.end);
  // A day before today cannot be picked (the inputs' min); typed in, it counts as not filled in (spec §5).
  if (start === null || start < today) errors.start = REQUIRED;
  else if (start > addDays(today, MAX_DAYS_AHEAD)) errors.start = START_TOO_LATE;
  if (end === null || end < today) errors.end = REQUIRED;
  else if (start !== null && !errors.start && end < start) errors.end = END_BEFORE_START;
  else if (start !== null && !errors.start && end > addDays(start, MAX_COURSE_DAYS - 1)) errors.end = TOO_LONG;

  const ok = !errors.students && !errors.start && !errors.end;
  return { errors, value: ok ? { studentsCount: students, startDate: start!, endDate: end! } : null };
}
