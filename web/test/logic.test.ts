import { describe, expect, it } from 'vitest';
import { formatDate, formatDateRange, formatHours, formatMoney, formatMoneyIn } from '../src/lib/format';
import { initials } from '../src/auth/initials';
import { decodeConnectPayload } from '../src/pages/Connect/payload';
import { connectUrl } from '../src/early/dial';
import { addDays, courseSpan, END_BEFORE_START, REQUIRED, STUDENTS_RANGE, todayIn, validateCourse } from '../src/pages/Setup/courseDates';

describe('formatting (spec §9)', () => {
  it("formats dates as DD Mon 'YY in the course's country", () => {
    expect(formatDate(new Date('2026-03-05T12:00:00Z'), 'UK')).toBe("05 Mar '26");
    expect(formatDateRange(new Date('2026-11-22T12:00:00Z'), new Date('2027-01-03T12:00:00Z'), 'DE')).toBe("22 Nov '26 - 03 Jan '27");
    expect(formatDate('not a date', 'UK')).toBe('');
    // The same instant is a different day in India than in Spain; every page shows the course's country's day.
    expect(formatDate('2026-12-25T20:00:00Z', 'IN')).toBe("26 Dec '26");
    expect(formatDate('2026-12-25T20:00:00Z', 'ES')).toBe("25 Dec '26");
  });

  it('formats money with the currency symbol', () => {
    expect(formatMoney(14.99, '£')).toBe('£ 14.99');
    expect(formatMoney(4999, '₹')).toBe('₹ 4,999');
    expect(formatMoney(49.5, '€')).toBe('€ 49.50');
    expect(formatMoneyIn(34.99, 'ES')).toBe('€ 34.99');
  });

  it('never overstates hours left', () => {
    expect(formatHours(24.98)).toBe('24.9');
    expect(formatHours(10)).toBe('10');
    expect(formatHours(-1)).toBe('0');
  });
});

describe('avatar initials', () => {
  it('takes the first and last initials, uppercased', () => {
    expect(initials('ada king lovelace')).toBe('AL');
    expect(initials('  Plato ')).toBe('P');
    expect(initials('')).toBe('?');
  });
});

describe('connect payload (spec §7)', () => {
  const encode = (o: unknown) => '#' + btoa(JSON.stringify(o));
  const good = { url: '/v1/slot/connect?packId=abc', role: 'SINGLE', packId: 'abc', machineName: 'UE-UK-1' };

  it('decodes base64 JSON {url, role, packId, machineName}', () => {
    expect(decodeConnectPayload(encode(good))).toMatchObject(good);
  });

  it('refuses anything else', () => {
    expect(decodeConnectPayload('')).toBeNull();
    expect(decodeConnectPayload('#%%%')).toBeNull();
    expect(decodeConnectPayload('#' + btoa('not json'))).toBeNull();
    expect(decodeConnectPayload(encode({ ...good, url: 'https://evil.example/' }))).toBeNull();
    expect(decodeConnectPayload(encode({ url: good.url }))).toBeNull();
  });

  it("gives the tab's first script the same link to dial, and nothing from a bad fragment", () => {
    expect(connectUrl(encode(good))).toBe(good.url);
    expect(connectUrl('')).toBeNull();
    expect(connectUrl('#%%%')).toBeNull();
    expect(connectUrl('#' + btoa('not json'))).toBeNull();
    expect(connectUrl(encode({ ...good, url: 'https://evil.example/' }))).toBeNull();
    expect(connectUrl(encode({ ...good, url: `/v1/slot/connect?packId=${'x'.repeat(2000)}` }))).toBeNull();
  });
});

describe('course details (spec §5)', () => {
  const now = Date.parse('2026-11-22T15:00:00Z');
  const day = (n: number) => addDays(todayIn('DE', now), n);

  it('requires students between 1 and 40 and a date range from today', () => {
    expect(validateCourse({ students: '', start: '', end: '' }, 'DE', now).errors).toEqual({ students: REQUIRED, start: REQUIRED, end: REQUIRED });
    expect(validateCourse({ students: '0', start: day(0), end: day(1) }, 'DE', now).errors.students).toBe(STUDENTS_RANGE);
    expect(validateCourse({ students: '41', start: day(0), end: day(1) }, 'DE', now).errors.students).toBe(STUDENTS_RANGE);
    expect(validateCourse({ students: '3', start: day(-1), end: day(1) }, 'DE', now).errors.start).toBe(REQUIRED);
    expect(validateCourse({ students: '3', start: day(3), end: day(1) }, 'DE', now).errors.end).toBe(END_BEFORE_START);
    expect(validateCourse({ students: '3', start: '2026-02-30', end: day(1) }, 'DE', now).errors.start).toBe(REQUIRED);
  });

  it("takes today from the course's country, not the browser's zone", () => {
    const lateInLondon = Date.parse('2026-11-22T23:30:00Z'); // already the 23rd in Kolkata
    expect(todayIn('UK', lateInLondon)).toBe('2026-11-22');
    expect(todayIn('IN', lateInLondon)).toBe('2026-11-23');
    expect(validateCourse({ students: '3', start: '2026-11-22', end: '2026-11-23' }, 'IN', lateInLondon).errors.start).toBe(REQUIRED);
  });

  it("runs a one-day course from midnight to the day's last millisecond in the course's country", () => {
    const { errors, value } = validateCourse({ students: '40', start: day(0), end: day(0) }, 'DE', now);
    expect(errors).toEqual({});
    expect(value!.studentsCount).toBe(40);
    const span = courseSpan(value!, 'DE');
    expect(new Date(span.startDate).toISOString()).toBe('2026-11-21T23:00:00.000Z');
    expect(span.expiresAt - span.startDate).toBe(24 * 3600_000 - 1);
    expect(formatDateRange(span.startDate, span.expiresAt, 'DE')).toBe("22 Nov '26 - 22 Nov '26");
    // A day with a clock change is 23 hours long there.
    expect(courseSpan({ startDay: '2026-03-29', endDay: '2026-03-29' }, 'ES').expiresAt - courseSpan({ startDay: '2026-03-29', endDay: '2026-03-29' }, 'ES').startDate).toBe(23 * 3600_000 - 1);
  });
});
