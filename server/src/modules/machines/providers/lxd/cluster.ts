import { LxdError, type LxdClient } from './client';
import type { FleetMember } from '../types';
import { place, type MemberLoad, type Placement, type Want } from './placement';

/**
 * What the lxd provider needs to know of an LXD (or Incus) cluster: its members, their capacity and our desktops on
 * each, and which instance is a machine's now. On a single host every answer is the trivial one (no member, the
 * instance `hd-<machineId>`), so nothing changes there.
 *
 * A machine's instance is `hd-<machineId>`; when the member holding it is lost, LXD 5.0 can neither delete nor rename
 * that record while the member is offline ("Missing event connection with target cluster member"), so the machine
 * gets a new instance `hd-<machineId>-g<n>` elsewhere: the highest generation is the machine's, older ones are
 * removed once their member is back (cleanStale).
 */

export interface Member {
  name: string;
  online: boolean;
  /** LXD's own words ("Fully operational", "No heartbeat for 21s"). */
  message: string;
}

export interface Inst {
  name: string;
  status: string;
  /** The member it lives on ('' on a single host). */
  location: string;
  profiles: string[];
  config: Record<string, string>;
}

export interface MemberDetail extends Member {
  cpus: number | null;
  memoryTotal: number | null;
  memoryUsed: number | null;
  load: number | null;
  gpus: { vendor: string; product: string }[];
  /** The desktops' storage pool on the member (their roots and homes): bytes used and its size. */
  storageUsed: number | null;
  storageTotal: number | null;
}

interface Resources {
  cpu?: { total?: number };
  memory?: { total?: number; used?: number };
  gpu?: { cards?: { vendor?: string; product?: string; driver?: string }[] };
}

const NAME = /^hd-(.+?)(?:-g(\d+))?$/;

/** The machine id and generation an instance name stands for (null: not a machine's instance). */
export function parseInstance(name: string): { machineId: string; gen: number } | null {
  const m = NAME.exec(name);
  return m ? { machineId: m[1]!, gen: m[2] ? Number(m[2]) : 0 } : null;
}

export const instanceName = (machineId: string, gen: number) => (gen === 0 ? `hd-${machineId}` : `hd-${machineId}-g${gen}`);

/** The machine's instance among a listing: its highest generation. */
export function currentOf(machineId: string, names: string[]): { name: string; gen: number } | null {
  let best: { name: string; gen: number } | null = null;
  for (const name of names) {
    const p = parseInstance(name);
    if (p?.machineId === machineId && (!best || p.gen > best.gen)) best = { name, gen: p.gen };
  }
  return best;
}

/** Instances that a newer generation of the same machine replaced. */
export function staleOf(names: string[]): string[] {
  const top = new Map<string, number>();
  for (const n of names) {
    const p = parseInstance(n);
    if (p) top.set(p.machineId, Math.max(top.get(p.machineId) ?? 0, p.gen));
  }
  return names.filter((n) => {
    const p = parseInstance(n);
    return p !== null && p.gen < top.get(p.machineId)!;
  });
}

export function createCluster(lxd: LxdClient, gpuProfile: string, pool: string) {
  let enabled: Promise<boolean> | null = null;
  let stateUnsupported = false;

  const isClustered = () =>
    (enabled ??= lxd.get<{ enabled?: boolean }>('/1.0/cluster').then(
      (c) => c.enabled === true,
      (err: unknown) => {
        enabled = null;
        throw err;
      },
    ));

  async function members(): Promise<Member[]> {
    if (!(await isClustered())) return [];
    const all = await lxd.get<{ server_name: string; status: string; message: string }[]>('/1.0/cluster/members?recursion=1');
    return all.map((m) => ({ name: m.server_name, online: m.status === 'Online', message: m.message }));
  }

  async function instances(): Promise<Inst[]> {
    const all = await lxd.get<{ name: string; status: string; location?: string; profiles?: string[] | null; config?: Record<string, string> | null }[]>('/1.0/instances?recursion=1');
    return all.map((i) => ({ name: i.name, status: i.status, location: i.location && i.location !== 'none' ? i.location : '', profiles: i.profiles ?? [], config: i.config ?? {} }));
  }

  /** The 1-minute load where the engine reports a member's state (LXD 5.0 does not: 501). */
  async function loadOf(name: string): Promise<number | null> {
    if (stateUnsupported) return null;
    try {
      const s = await lxd.get<{ sysinfo?: { load_averages?: number[] } }>(`/1.0/cluster/members/${encodeURIComponent(name)}/state`);
      return s.sysinfo?.load_averages?.[0] ?? null;
    } catch (err) {
      if (err instanceof LxdError && (err.status === 501 || err.status === 404)) stateUnsupported = true;
      return null;
    }
  }

  async function detail(m: Member, single = false): Promise<MemberDetail> {
    if (!m.online) return { ...m, cpus: null, memoryTotal: null, memoryUsed: null, load: null, gpus: [], storageUsed: null, storageTotal: null };
    const at = single ? '' : `?target=${encodeURIComponent(m.name)}`;
    const [r, load, pooled] = await Promise.all([
      lxd.get<Resources>(`/1.0/resources${at}`).catch(() => null),
      single ? null : loadOf(m.name),
      lxd.get<{ space?: { used?: number; total?: number } }>(`/1.0/storage-pools/${encodeURIComponent(pool)}/resources${at}`).catch(() => null),
    ]);
    const space = pooled?.space;
    return {
      ...m,
      cpus: r?.cpu?.total ?? null,
      memoryTotal: r?.memory?.total ?? null,
      memoryUsed: r?.memory?.used ?? null,
      load,
      gpus: (r?.gpu?.cards ?? []).map((c) => ({ vendor: c.vendor ?? '', product: c.product ?? c.driver ?? 'GPU' })),
      storageUsed: space?.used ?? null,
      storageTotal: space?.total ?? null,
    };
  }

  const details = async () => Promise.all((await members()).map((m) => detail(m)));

  /** Desktops that hold (or are about to hold) a member's capacity: everything of ours not stopped there. */
  const busy = (i: Inst) => i.status !== 'Stopped';

  /** Member loads for placement, with `pending` desktops (being created, not listed yet) counted in. */
  function loads(ds: MemberDetail[], insts: Inst[], pending: Map<string, number>): MemberLoad[] {
    return ds.map((d) => {
      const mine = insts.filter((i) => i.location === d.name && busy(i));
      return {
        name: d.name,
        online: d.online && d.cpus !== null,
        cpus: d.cpus ?? 0,
        memoryTotal: d.memoryTotal ?? 0,
        memoryUsed: d.memoryUsed ?? 0,
        load: d.load ?? undefined,
        gpus: d.gpus.length,
        storageTotal: d.storageTotal ?? undefined,
        storageUsed: d.storageUsed ?? undefined,
        desktops: mine.length + (pending.get(d.name) ?? 0),
        gpuDesktops: mine.filter((i) => i.profiles.includes(gpuProfile)).length,
      };
    });
  }

  /**
   * Chooses a member for a new desktop and counts it as pending there until `done` is called (after its create), so
   * desktops placed together spread instead of all reading the same free capacity.
   */
  const pending = new Map<string, number>();
  let placing: Promise<unknown> = Promise.resolve();
  function reserve(want: Want): Promise<{ placement: Placement; done(): void }> {
    const next = placing.then(async () => {
      const [ds, insts] = await Promise.all([details(), instances()]);
      const placement = place(loads(ds, insts, pending), want);
      if (!('member' in placement)) return { placement, done: () => undefined };
      const member = placement.member;
      pending.set(member, (pending.get(member) ?? 0) + 1);
      let released = false;
      return {
        placement,
        done: () => {
          if (released) return;
          released = true;
          const n = (pending.get(member) ?? 1) - 1;
          if (n > 0) pending.set(member, n);
          else pending.delete(member);
        },
      };
    });
    placing = next.catch(() => undefined);
    return next;
  }

  /** Where a custom volume lives: the members holding a volume of that name (a local pool keeps one per member). */
  async function volumeMembers(pool: string, volume: string): Promise<string[]> {
    const all = await lxd.get<{ name: string; location?: string }[]>(`/1.0/storage-pools/${pool}/volumes/custom?recursion=1`);
    return all.filter((v) => v.name === volume).map((v) => v.location ?? '');
  }

  /** The operator's view: every member (one host: the host itself) with its load, GPUs and our machines on it. */
  async function fleet(): Promise<FleetMember[]> {
    const clustered = await isClustered();
    const [ds, insts] = await Promise.all([
      clustered ? details() : lxd.get<{ environment?: { server_name?: string } }>('/1.0').then((s) => Promise.all([detail({ name: s.environment?.server_name ?? 'this host', online: true, message: 'Single host' }, true)])),
      instances(),
    ]);
    const stale = new Set(staleOf(insts.map((i) => i.name)));
    return ds.map((d) => {
      const here = insts.filter((i) => !stale.has(i.name) && (!clustered || i.location === d.name));
      const machines = here.flatMap((i) => {
        const p = parseInstance(i.name);
        return p ? [{ machineId: p.machineId, instance: i.name, status: i.status, gpu: i.profiles.includes(gpuProfile) }] : [];
      });
      return { ...d, machines };
    });
  }

  return { isClustered, members, details, instances, reserve, volumeMembers, fleet };
}

export type Cluster = ReturnType<typeof createCluster>;
