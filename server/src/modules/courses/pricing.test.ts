import { describe, expect, it } from 'vitest';
import { courseDatesProblem, courseDiscountPercent, priceCourse, pricesMap } from './pricing';
import { courseDate, courseMachineName, courseName } from './fulfil';

const UK = [
  { hours: 10, priceMinor: 1499, currency: 'GBP' },
  { hours: 25, priceMinor: 3499, currency: 'GBP' },
  { hours: 50, priceMinor: 6499, currency: 'GBP' },
];

describe('course pricing', () => {
  it('multiplies the pack price by the machines, sorted by hours', () => {
    expect(priceCourse(UK, 1)).toEqual([
      { hours: 10, amountMinor: 1499, currency: 'GBP' },
      { hours: 25, amountMinor: 3499, currency: 'GBP' },
      { hours: 50, amountMinor: 6499, currency: 'GBP' },
    ]);
    expect(priceCourse([...UK].reverse(), 3).map((p) => p.amountMinor)).toEqual([4497, 10497, 19497]);
  });

  it('gives the volume discount from 10 and 25 machines', () => {
    expect(courseDiscountPercent(9)).toBe(0);
    expect(courseDiscountPercent(10)).toBe(10);
    expect(courseDiscountPercent(24)).toBe(10);
    expect(courseDiscountPercent(25)).toBe(15);
    expect(priceCourse(UK, 10)[0]!.amountMinor).toBe(Math.round(1499 * 10 * 0.9));
    expect(priceCourse(UK, 40)[0]!.amountMinor).toBe(Math.round(1499 * 40 * 0.85));
  });

  it('refuses 0 and 41 machines and keeps the cheapest of duplicate hours', () => {
    expect(() => priceCourse(UK, 0)).toThrow(RangeError);
    expect(() => priceCourse(UK, 41)).toThrow(RangeError);
    expect(priceCourse([...UK, { hours: 10, priceMinor: 999, currency: 'GBP' }], 1)[0]!.amountMinor).toBe(999);
    expect(priceCourse([], 5)).toEqual([]);
  });

  it('answers the cost map in major units', () => {
    expect(pricesMap(priceCourse(UK, 2))).toEqual({ '10': 29.98, '25': 69.98, '50': 129.98 });
  });
});

describe('course dates', () => {
  const now = new Date('2025-05-10T15:00:00Z');
  const day = 86_400_000;
  it('accepts today in any time zone, refuses the past', () => {
    const midnightIST = Date.parse('2025-05-10T00:00:00+05:30');
    const midnightLondon = Date.parse('2025-05-10T00:00:00+01:00');
    expect(courseDatesProblem(midnightIST, midnightIST + 7 * day, now)).toBeNull();
    expect(courseDatesProblem(midnightLondon, midnightLondon + day, now)).toBeNull();
    expect(courseDatesProblem(now.getTime() - 2 * day, now.getTime() + day, now)).toBe('The start date cannot be in the past.');
  });

  it('refuses an end before the start, and courses longer or later than a year', () => {
    const t = now.getTime();
    expect(courseDatesProblem(t + day, t + day, now)).toBe('The end date must be after the start date.');
    expect(courseDatesProblem(t + 2 * day, t + day, now)).toBe('The end date must be after the start date.');
    expect(courseDatesProblem(t + 400 * day, t + 401 * day, now)).toBe('The course must start within a year.');
    expect(courseDatesProblem(t, t + 367 * day, now)).toBe('A course can last at most one year.');
  });
});

describe('course names', () => {
  it("formats dates as 'DD Mon 'YY' in the course's country", () => {
    const start = new Date('2025-06-01T00:00:00+05:30'); // 31 May in UTC
    expect(courseDate(start, 'IN')).toBe("01 Jun '25");
    expect(courseName(start, 'IN')).toBe("Course 01 Jun '25");
    expect(courseDate(new Date('2025-09-03T12:00:00Z'), 'UK')).toBe("03 Sep '25");
  });

  it('names machines by platform, country, course and seat', () => {
    expect(courseMachineName('Unreal Engine', 'UK', '3f9a0c1e-0000-4000-8000-000000000000', 1)).toBe('UE-UK-C3F9A-01');
    expect(courseMachineName('Unity Engine', 'DE', 'ab12cd34-0000-4000-8000-000000000000', 40)).toBe('UN-DE-CAB12-40');
  });
});
