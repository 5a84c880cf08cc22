import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import type { Observed } from '../../db/schema/index';
import { liveLotsOf } from '../ledger/service';

export interface SingleMachineHours {
  id: string;
  name: string;
  platform: string;
  region: string;
  observed: Observed;
  stopReason: string | null;
  processingSince: Date | null;
  /** Minutes left and minutes bought in the machine's live lots (the ledger's running remainders). */
  leftMinutes: number;
  totalMinutes: number;
}

/** The user's single (non-course) machines with their live hours, oldest first: ONE query, whatever the usage. */
export async function singleMachinesWithHours(q: Queryable, userId: string, at: Date): Promise<SingleMachineHours[]> {
  const res = await q.execute(sql`
    select m.id, m.name, m.platform, m.region, m.observed, m.stop_reason, m.processing_since, t.left_minutes, t.total_minutes
    from machines m cross join lateral ${liveLotsOf(sql`m.id`, at)} t
    where m.owner_user_id = ${userId}::uuid and m.course_id is null
    order by m.created_at, m.id`);
  return (res.rows as Record<string, unknown>[]).map((r) => ({
    id: String(r.id),
    name: String(r.name),
    platform: String(r.platform),
    region: String(r.region),
    observed: r.observed as Observed,
    stopReason: (r.stop_reason as string | null) ?? null,
    processingSince: r.processing_since ? new Date(r.processing_since as string | Date) : null,
    leftMinutes: Number(r.left_minutes),
    totalMinutes: Number(r.total_minutes),
  }));
}
