/**
 * Course dates, one formatter for every place that shows them (setup, checkout, invitation e-mail, result pages,
 * dashboards). A course's days are the days of its country's time zone, whatever the viewer's or the server's own
 * zone: the start date is the midnight that begins the start day there, the course ends with the last millisecond
 * of the end day there, and every date is shown in that zone (spec §9 format 'DD Mon 'YY').
 */
import type { CountryId } from './common';

export const COUNTRY_TIME_ZONES: Readonly<Record<CountryId, string>> = {
  DE: 'Europe/Berlin',
  ES: 'Europe/Madrid',
  IN: 'Asia/Kolkata',
  UK: 'Europe/London',
};

/** The time zone a course's dates are in: its country's (UTC for an unknown country). */
export function courseTimeZone(region: string): string {
  return COUNTRY_TIME_ZONES[region as CountryId] ?? 'UTC';
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const pad = (n: number) => String(n).padStart(2, '0');

const formatters = new Map<string, Intl.DateTimeFormat>();
function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock of an instant in a zone, as the UTC instant that shows the same clock. */
function wallClock(ms: number, timeZone: string): { y: number; m: number; d: number; asUtc: number } {
  const parts = wallClockFormat(timeZone).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const [y, m, d] = [n('year'), n('month'), n('day')];
  return { y, m, d, asUtc: Date.UTC(y, m - 1, d, n('hour') % 24, n('minute'), n('second')) };
}

const toMs = (value: Date | string | number) => (value instanceof Date ? value.getTime() : new Date(value).getTime());

/** `YYYY-MM-DD`: the calendar day an instant falls on in the zone ('' for an invalid date). */
export function dayInZone(value: Date | string | number, timeZone: string): string {
  const ms = toMs(value);
  if (Number.isNaN(ms)) return '';
  const { y, m, d } = wallClock(ms, timeZone);
  return `${y}-${pad(m)}-${pad(d)}`;
}

/** True for a real calendar day written `YYYY-MM-DD`. */
export function isDay(day: string): boolean {
  const m = DAY.exec(day);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Calendar arithmetic on `YYYY-MM-DD` (no time zone involved). */
export function addDays(day: string, days: number): string {
  const m = DAY.exec(day);
  if (!m) return '';
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days));
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** The instant (epoch ms) the day begins in the zone, or null for a string that is not a day. */
export function startOfDay(day: string, timeZone: string): number | null {
  if (!isDay(day)) return null;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d);
  // The zone's offset at the guess, then at the corrected instant (they differ when a DST change lies between).
  let at = guess - (wallClock(guess, timeZone).asUtc - guess);
  at = guess - (wallClock(at, timeZone).asUtc - at);
  return at;
}

/**
 * The instant (epoch ms) the wall clock of the zone reads `minute` minutes past midnight on `day` (class times), or
 * null for a string that is not a day. A clock time a DST change skips resolves to the instant an hour later.
 */
export function instantAt(day: string, minute: number, timeZone: string): number | null {
  if (!isDay(day)) return null;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d, 0, minute);
  let at = guess - (wallClock(guess, timeZone).asUtc - guess);
  at = guess - (wallClock(at, timeZone).asUtc - at);
  return at;
}

/** `HH:MM` (24-hour) of an instant on the course's country's wall clock ('' for an invalid date). */
export function formatCourseTime(value: Date | string | number, region: string): string {
  return formatTimeInZone(value, courseTimeZone(region));
}

/** `HH:MM` (24-hour) of an instant on a zone's wall clock ('' for an invalid date). */
export function formatTimeInZone(value: Date | string | number, timeZone: string): string {
  const ms = toMs(value);
  if (Number.isNaN(ms)) return '';
  const c = new Date(wallClock(ms, timeZone).asUtc);
  return `${pad(c.getUTCHours())}:${pad(c.getUTCMinutes())}`;
}

/** The last millisecond of the day in the zone (when a course that ends that day ends). */
export function endOfDay(day: string, timeZone: string): number | null {
  const next = startOfDay(addDays(day, 1), timeZone);
  return next === null ? null : next - 1;
}

/** Spec §9's 'DD Mon 'YY' of the day an instant falls on in the course's country ('' for an invalid date). */
export function formatCourseDate(value: Date | string | number, region: string): string {
  const day = dayInZone(value, courseTimeZone(region));
  if (!day) return '';
  const [y, m, d] = day.split('-');
  return `${d} ${MONTHS[Number(m) - 1]} '${y!.slice(-2)}`;
}

/** A course's date range, e.g. `05 Mar '26 - 20 Mar '26`. */
export function formatCourseDates(start: Date | string | number, end: Date | string | number, region: string): string {
  return `${formatCourseDate(start, region)} - ${formatCourseDate(end, region)}`;
}
