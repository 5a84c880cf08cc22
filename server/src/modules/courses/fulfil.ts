/**
 * Turning a paid course order into a course: VMs machines, each credited TotalHours that expire at the course's
 * end. Runs inside the payment fulfilment transaction (billing), so the order, the course, its machines and the
 * hours appear together or not at all; safe to run any number of times for one order.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { formatCourseDate } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { courses, machines, orders } from '../../db/schema/index';

export type OrderRow = typeof orders.$inferSelect;

/** What fulfilment needs of the ledger (ctx.ledger). */
export interface CreditLedger {
  credit(q: Queryable, e: { machineId: string; minutes: number; expiresAt: Date; orderId?: string; key: string; note?: string }): Promise<boolean>;
}

const PLATFORM_CODES: Record<string, string> = { 'Unreal Engine': 'UE', 'Unity Engine': 'UN' };
/** The spec's date format, 'DD Mon 'YY', of the day in the course's country (contract/src/dates.ts). */
export const courseDate = formatCourseDate;

export function courseName(startAt: Date, region: string): string {
  return `Course ${courseDate(startAt, region)}`;
}

/** e.g. UE-UK-C3F9A-01: platform, country, course (first 4 characters of its id), seat number. */
export function courseMachineName(platform: string, region: string, courseId: string, seq: number): string {
  const code = PLATFORM_CODES[platform] ?? platform.slice(0, 2).toUpperCase();
  return `${code}-${region}-C${courseId.replace(/-/g, '').slice(0, 4).toUpperCase()}-${String(seq).padStart(2, '0')}`;
}

/**
 * Creates the course of a paid 'course' order and answers its id; when the order already has its course, answers
 * that one (the ledger keys order:<orderId>:<seq> make the credits idempotent too). Locks the order row so two
 * concurrent fulfilments of one order create one course.
 */
export async function fulfilCourseOrder(tx: Queryable, ledger: CreditLedger, order: Pick<OrderRow, 'id'>): Promise<string> {
  const [o] = await tx.select().from(orders).where(eq(orders.id, order.id)).for('update');
  if (!o) throw new Error(`order ${order.id} not found`);
  if (o.kind !== 'course' || !o.startAt || !o.expiresAt) throw new Error(`order ${o.id} is not a course order`);
  if (o.courseId) return o.courseId;

  const courseId = randomUUID();
  await tx.insert(courses).values({
    id: courseId,
    ownerUserId: o.userId,
    name: courseName(o.startAt, o.region),
    region: o.region,
    platform: o.platform,
    vms: o.vms,
    hoursPerMachine: o.hours,
    startAt: o.startAt,
    endAt: o.expiresAt,
  });
  const rows = Array.from({ length: o.vms }, (_, i) => ({
    id: randomUUID(),
    courseId,
    seq: i + 1,
    name: courseMachineName(o.platform, o.region, courseId, i + 1),
    region: o.region,
    platform: o.platform,
  }));
  await tx.insert(machines).values(rows);
  await tx.update(orders).set({ courseId }).where(eq(orders.id, o.id));
  for (const m of rows) {
    await ledger.credit(tx, {
      machineId: m.id,
      minutes: o.hours * 60,
      expiresAt: o.expiresAt,
      orderId: o.id,
      key: `order:${o.id}:${m.seq}`,
      note: `Course order, seat ${m.seq}`,
    });
  }
  return courseId;
}
