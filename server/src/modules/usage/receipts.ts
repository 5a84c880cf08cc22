/**
 * Receipts (issue 22.4): one per paid order of the caller, with the country's VAT/GST line (tax included in the
 * price), as data for the printable page and as a PDF. Another user's order is a plain 404.
 */
import { sql } from 'drizzle-orm';
import { countryById, type CountryId, type Receipt } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import { NotFound } from '../../errors';
import { CONSUMER_TAX, includedTaxMinor } from './tax';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const RECEIPT_NOT_FOUND = 'Receipt not found.';

interface Row {
  id: string;
  kind: 'single' | 'course';
  region: string;
  platform: string;
  hours: number;
  vms: number;
  amount_minor: string | number;
  currency: string;
  payment_method: string | null;
  paid_at: string | Date;
  course_name: string | null;
  display_name: string;
  email: string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function describe(r: Row): string {
  const country = countryById(r.region)?.label ?? r.region;
  if (r.kind === 'course') {
    return `${r.course_name ?? 'Course'}: ${plural(r.vms, 'machine', 'machines')} × ${plural(r.hours, 'hour', 'hours')}, ${r.platform}, ${country}`;
  }
  return `${plural(r.hours, 'hour', 'hours')} of ${r.platform} machine time, ${country}`;
}

function toReceipt(r: Row): Receipt {
  const region = r.region as CountryId;
  const tax = CONSUMER_TAX[region] ?? { label: 'Tax', rate: 0 };
  const totalMinor = Number(r.amount_minor);
  return {
    orderId: r.id,
    number: `HD-${r.id.slice(0, 8).toUpperCase()}`,
    paidAt: new Date(r.paid_at).toISOString(),
    description: describe(r),
    region,
    currency: r.currency.toUpperCase(),
    total: totalMinor / 100,
    taxLabel: tax.label,
    taxRate: tax.rate,
    tax: includedTaxMinor(totalMinor, tax.rate) / 100,
    paymentMethod: r.payment_method,
    customer: { name: r.display_name, email: r.email },
  };
}

const select = (where: ReturnType<typeof sql>) => sql`
  select o.id, o.kind, o.region, o.platform, o.hours, o.vms, o.amount_minor, o.currency, o.payment_method,
      coalesce(o.paid_at, o.created_at) as paid_at, c.name as course_name, u.display_name, u.email
    from orders o join users u on u.id = o.user_id left join courses c on c.id = o.course_id
    where o.status = 'paid' and ${where}
    order by coalesce(o.paid_at, o.created_at) desc`;

/** The caller's receipts, newest first. */
export async function receiptsOf(q: Queryable, uid: string): Promise<Receipt[]> {
  const res = await q.execute(select(sql`o.user_id = ${uid}::uuid`));
  return (res.rows as unknown as Row[]).map(toReceipt);
}

/** One receipt of the caller; 404 for an unknown, unpaid or someone else's order. */
export async function receiptOf(q: Queryable, uid: string, orderId: string): Promise<Receipt> {
  if (!UUID.test(orderId)) throw new NotFound(RECEIPT_NOT_FOUND);
  const res = await q.execute(select(sql`o.user_id = ${uid}::uuid and o.id = ${orderId}::uuid`));
  const row = res.rows[0] as unknown as Row | undefined;
  if (!row) throw new NotFound(RECEIPT_NOT_FOUND);
  return toReceipt(row);
}
