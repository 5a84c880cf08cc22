/**
 * Course pricing (pure): the one function behind POST /v1/pack/cost and the checkout of POST /v1/pack/recharge,
 * so the price a user saw is the price the server charges (design §5).
 *
 * A course of `vms` machines with `hours` per machine costs the catalog price of the `hours` pack of its country
 * and platform, times `vms`, less a volume discount. Course dates do not change the price (they bound when the
 * hours can be used).
 */
import { MAX_STUDENTS, MIN_STUDENTS } from '@hyperdesk/contract';

export interface CatalogPack {
  hours: number;
  priceMinor: number;
  currency: string;
}

export interface CoursePrice {
  hours: number;
  amountMinor: number;
  currency: string;
}

/** Volume discount in percent by concurrent students. */
export const COURSE_DISCOUNTS: readonly { minVms: number; percent: number }[] = [
  { minVms: 25, percent: 15 },
  { minVms: 10, percent: 10 },
];

export function courseDiscountPercent(vms: number): number {
  return COURSE_DISCOUNTS.find((d) => vms >= d.minVms)?.percent ?? 0;
}

/** Prices of every hours option for `vms` machines, in minor units, sorted by hours; duplicates keep the cheapest. */
export function priceCourse(packs: readonly CatalogPack[], vms: number): CoursePrice[] {
  if (!Number.isInteger(vms) || vms < MIN_STUDENTS || vms > MAX_STUDENTS) throw new RangeError(`vms out of range: ${vms}`);
  const factor = (100 - courseDiscountPercent(vms)) / 100;
  const byHours = new Map<number, CoursePrice>();
  for (const p of packs) {
    const amountMinor = Math.round(p.priceMinor * vms * factor);
    const prev = byHours.get(p.hours);
    if (!prev || amountMinor < prev.amountMinor) byHours.set(p.hours, { hours: p.hours, amountMinor, currency: p.currency });
  }
  return [...byHours.values()].sort((a, b) => a.hours - b.hours);
}

/** Minor units to the major-unit number the contract answers with (all supported currencies have 2 decimals). */
export function toMajor(minor: number): number {
  return Math.round(minor) / 100;
}

/** The `prices` map of the cost answer: hours → price in major units. */
export function pricesMap(prices: readonly CoursePrice[]): Record<string, number> {
  return Object.fromEntries(prices.map((p) => [String(p.hours), toMajor(p.amountMinor)]));
}

export const MAX_COURSE_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Course date rules. "Today" is the user's today in any time zone: the date picker sends the local midnight of the
 * chosen day, which is never more than 24 hours before now, so StartAt must be ≥ now − 24 h. The course must end
 * after it starts, start within a year and last at most MAX_COURSE_DAYS. Answers the error message, or null.
 */
export function courseDatesProblem(startAt: number, expiresAt: number, now: Date): string | null {
  const t = now.getTime();
  if (startAt < t - DAY_MS) return 'The start date cannot be in the past.';
  if (expiresAt <= startAt) return 'The end date must be after the start date.';
  if (expiresAt <= t) return 'The end date cannot be in the past.';
  if (startAt > t + MAX_COURSE_DAYS * DAY_MS) return 'The course must start within a year.';
  if (expiresAt - startAt > MAX_COURSE_DAYS * DAY_MS) return 'A course can last at most one year.';
  return null;
}
