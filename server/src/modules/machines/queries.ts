import { sql, type SQL } from 'drizzle-orm';
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

/**
 * The user's single (non-course) machines with their live hours, oldest first, as ONE JSON array: a scalar select
 * the caller embeds in its own statement (the wallet reads the whole balance in one round trip), whatever the usage.
 */
export function singleMachinesWithHoursJson(userId: string, at: Date): SQL {
  return sql`select coalesce(json_agg(json_build_object('id', m.id, 'name', m.name, 'platform', m.platform, 'region', m.region,
      'observed', m.observed, 'stopReason', m.stop_reason, 'processingSince', m.processing_since,
      'leftMinutes', t.left_minutes, 'totalMinutes', t.total_minutes) order by m.created_at, m.id), '[]')
    from machines m cross join lateral ${liveLotsOf(sql`m.id`, at)} t
    where m.owner_user_id = ${userId}::uuid and m.course_id is null`;
}

/** Reads the array selected by singleMachinesWithHoursJson. */
export function readSingleMachines(json: unknown): SingleMachineHours[] {
  return (json as Record<string, unknown>[]).map((r) => ({
    id: String(r.id),
    name: String(r.name),
    platform: String(r.platform),
    region: String(r.region),
    observed: r.observed as Observed,
    stopReason: (r.stopReason as string | null) ?? null,
    processingSince: r.processingSince ? new Date(r.processingSince as string) : null,
    leftMinutes: Number(r.leftMinutes),
    totalMinutes: Number(r.totalMinutes),
  }));
}
