import { sql } from 'drizzle-orm';
import type { FleetHostMachine, FleetHosts } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import type { MachineProvider } from '../machines/providers/types';
import { UUID_RE } from './cursor';

type Known = { id: string; name: string; observed: FleetHostMachine['observed']; owner: string | null };

/** Names, owners and states of the machines the hosts run, in one statement. */
async function known(q: Queryable, ids: string[]): Promise<Map<string, Known>> {
  const valid = ids.filter((id) => UUID_RE.test(id));
  if (!valid.length) return new Map();
  const res = await q.execute(sql`
    select m.id, m.name, m.observed, coalesce(o.email, c.name) as owner
    from machines m left join users o on o.id = m.owner_user_id left join courses c on c.id = m.course_id
    where m.id in (${sql.join(valid.map((id) => sql`${id}::uuid`), sql`, `)})`);
  return new Map((res.rows as Known[]).map((r) => [r.id, r]));
}

/**
 * The console's hosts: each member of the provider's cluster (or its one host) with its load and GPUs, and the
 * machines on it named from the database. The engine's figures are read live (a few calls per member).
 */
export async function listFleetHosts(q: Queryable, provider: MachineProvider): Promise<FleetHosts> {
  if (!provider.fleet) return { provider: provider.kind, members: [], error: null };
  let hosts;
  try {
    hosts = await provider.fleet();
  } catch (err) {
    return { provider: provider.kind, members: [], error: `The hosts could not be read: ${(err as Error).message}` };
  }
  const rows = await known(q, hosts.flatMap((h) => h.machines.map((m) => m.machineId)));
  return {
    provider: provider.kind,
    error: null,
    members: hosts.map(({ machines, ...h }) => ({
      ...h,
      machines: machines.map((m) => {
        const row = rows.get(m.machineId);
        return { id: m.machineId, name: row?.name ?? null, owner: row?.owner ?? null, observed: row?.observed ?? null, instance: m.instance, status: m.status, gpu: m.gpu };
      }),
    })),
  };
}
