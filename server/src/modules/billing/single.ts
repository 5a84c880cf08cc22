import { randomInt, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client';
import type { Ledger } from '../ledger/service';
import type { Fulfiller } from './fulfilment';

const NAME_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** "UE-UK-7KQ2": platform, country and four random characters. */
export function machineName(platform: string, region: string): string {
  const abbr = platform === 'Unity Engine' ? 'UN' : 'UE';
  const tail = Array.from({ length: 4 }, () => NAME_CHARS[randomInt(NAME_CHARS.length)]).join('');
  return `${abbr}-${region}-${tail}`;
}

/** Calendar months later, clamped to the month's last day (31 Jan + 1 month = 28/29 Feb). */
export function addMonths(d: Date, months: number): Date {
  const r = new Date(d.getTime());
  const day = r.getUTCDate();
  r.setUTCDate(1);
  r.setUTCMonth(r.getUTCMonth() + months);
  const last = new Date(Date.UTC(r.getUTCFullYear(), r.getUTCMonth() + 1, 0)).getUTCDate();
  r.setUTCDate(Math.min(day, last));
  return r;
}

/** The user's one machine for (region, platform) (design §5), created on first purchase; concurrent purchases agree. */
export async function findOrCreateMachine(tx: Tx, userId: string, region: string, platform: string): Promise<string> {
  await tx.execute(sql`insert into machines (id, owner_user_id, name, region, platform)
    values (${randomUUID()}, ${userId}, ${machineName(platform, region)}, ${region}, ${platform})
    on conflict (owner_user_id, region, platform) where course_id is null do nothing`);
  const res = await tx.execute(sql`select id from machines
    where owner_user_id = ${userId} and region = ${region} and platform = ${platform} and course_id is null`);
  const row = res.rows[0] as { id: string } | undefined;
  if (!row) throw new Error('machine row missing after insert');
  return row.id;
}

/** A paid single pack: its hours (in minutes) go to the user's machine for the pack's country and platform and
 *  expire one month after payment. Keyed by the order, so it is credited once however often it is converged. */
export function singleFulfiller(ledger: Ledger): Fulfiller {
  return async (tx, order, paidAt) => {
    const machineId = await findOrCreateMachine(tx, order.userId, order.region, order.platform);
    await ledger.credit(tx, {
      machineId,
      minutes: order.hours * 60,
      expiresAt: addMonths(paidAt, 1),
      orderId: order.id,
      key: `order:${order.id}`,
      note: `${order.hours} hours purchased`,
    });
    return { machineId };
  };
}
