import { describe, expect, it } from 'vitest';
import { formatDate, formatDateRange, formatHours, formatMoney, formatMoneyIn } from '../src/lib/format';
import { initials } from '../src/auth/initials';
import { decodeConnectPayload } from '../src/pages/Connect/payload';
import { addDays, courseEndsAt, END_BEFORE_START, REQUIRED, STUDENTS_RANGE, toInputDate, todayStart, validateCourse } from '../src/pages/Setup/courseDates';

describe('formatting (spec §9)', () => {
  it("formats dates as DD Mon 'YY", () => {
    expect(formatDate(new Date(2026, 2, 5))).toBe("05 Mar '26");
    expect(formatDateRange(new Date(2026, 10, 22), new Date(2027, 0, 3))).toBe("22 Nov '26 - 03 Jan '27");
    expect(formatDate('not a date')).toBe('');
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
});

describe('course details (spec §5)', () => {
  const now = new Date(2026, 10, 22, 15, 0).getTime();
  const day = (n: number) => toInputDate(addDays(todayStart(now), n));

  it('requires students between 1 and 40 and a date range from today', () => {
    expect(validateCourse({ students: '', start: '', end: '' }, now).errors).toEqual({ students: REQUIRED, start: REQUIRED, end: REQUIRED });
    expect(validateCourse({ students: '0', start: day(0), end: day(1) }, now).errors.students).toBe(STUDENTS_RANGE);
    expect(validateCourse({ students: '41', start: day(0), end: day(1) }, now).errors.students).toBe(STUDENTS_RANGE);
    expect(validateCourse({ students: '3', start: day(-1), end: day(1) }, now).errors.start).toBe(REQUIRED);
    expect(validateCourse({ students: '3', start: day(3), end: day(1) }, now).errors.end).toBe(END_BEFORE_START);
  });

  it('accepts a one-day course ending at the last millisecond of the day', () => {
    const { errors, value } = validateCourse({ students: '40', start: day(0), end: day(0) }, now);
    expect(errors).toEqual({});
    expect(value!.studentsCount).toBe(40);
    expect(courseEndsAt(value!.endDate) - value!.startDate).toBe(24 * 3600_000 - 1);
  });
});
