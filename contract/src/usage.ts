import { z } from 'zod';
import { CountryId } from './common';

/**
 * Usage history (issue 22.4): when each machine ran and the hours it used (the metered minutes, grouped into runs),
 * and for an instructor each student's sessions on the course's machines. Times are ISO-8601; `end` is null while a
 * run or session goes on.
 */
export const UsageQuery = z.object({ packId: z.string().max(100) });
export const UsageRun = z.object({ machineName: z.string(), start: z.string(), end: z.string().nullable(), hours: z.number() });
export const StudentSession = z.object({ student: z.string(), machineName: z.string(), start: z.string(), end: z.string().nullable(), hours: z.number() });
export const UsageAnswer = z.object({
  machineName: z.string(),
  region: CountryId,
  /** Newest first, at most USAGE_MAX_ROWS. */
  runs: z.array(UsageRun),
  /** Instructors only: each student's desktop sessions, newest first. */
  students: z.array(StudentSession).optional(),
  /** Hours used in all (the runs'). */
  totalHours: z.number(),
});
export type UsageAnswer = z.infer<typeof UsageAnswer>;
export const UsageCsvQuery = UsageQuery.extend({ view: z.enum(['machines', 'students']).default('machines') });
export const USAGE_MAX_ROWS = 1000;

/** A receipt for a paid order, with the country's VAT/GST included in the price. */
export const Receipt = z.object({
  orderId: z.string(),
  /** HD-<first 8 of the order id>: what the customer quotes. */
  number: z.string(),
  paidAt: z.string(),
  description: z.string(),
  region: CountryId,
  currency: z.string(),
  /** Major units, tax included. */
  total: z.number(),
  taxLabel: z.string(),
  /** 0.19 for 19 %. */
  taxRate: z.number(),
  /** The tax included in `total`, major units. */
  tax: z.number(),
  paymentMethod: z.string().nullable(),
  customer: z.object({ name: z.string(), email: z.string() }),
});
export type Receipt = z.infer<typeof Receipt>;
export const ReceiptsAnswer = z.object({ receipts: z.array(Receipt) });
export type ReceiptsAnswer = z.infer<typeof ReceiptsAnswer>;
export const ReceiptQuery = z.object({ orderId: z.string().max(100) });
