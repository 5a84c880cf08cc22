/**
 * Where a new desktop goes in an LXD cluster: pure logic, no I/O (cluster.ts gathers the figures). A member is a
 * candidate when it is online and, for a desktop that needs a GPU, has a card no desktop of ours holds. Among the
 * candidates, the member the machine's home lives on (a local pool) is the only choice; otherwise the one with the most
 * free capacity: the smallest of its free memory, free CPU and free storage shares, where what is
 * used is the larger of what the member reports and what our desktops there may take (their limits), so ten desktops
 * started together that use nothing yet still spread. A member where the desktop does not fit is chosen only when
 * none fits (limits are ceilings: idle desktops use a fraction of them). Storage counts only in the score: quotas are
 * ceilings too, but a member whose pool is nearly full is the last choice (its homes could not grow there).
 */

export interface MemberLoad {
  name: string;
  online: boolean;
  /** CPU threads. */
  cpus: number;
  memoryTotal: number;
  /** What the member's host reports in use (bytes). */
  memoryUsed: number;
  /** The 1-minute load average, where the engine reports it (LXD 5.0 does not). */
  load?: number;
  /** GPU cards on the member. */
  gpus: number;
  /** The desktops' storage pool on the member (bytes), where the engine reports it. */
  storageTotal?: number;
  storageUsed?: number;
  /** Our desktops running or being started there. */
  desktops: number;
  /** Of those, the ones holding a GPU. */
  gpuDesktops: number;
}

export interface Want {
  cpus: number;
  memoryBytes: number;
  gpu: boolean;
  /**
   * The member that holds the machine's home folder on a local pool: the desktop must run there (LXD 5.0 cannot
   * move a custom volume between members), so capacity does not choose.
   */
  pin?: string;
}

export type Placement = { member: string } | { error: string };

export const NO_MEMBER_ONLINE = 'No host of the cluster is online.';
export const NO_FREE_GPU = 'Every GPU of the cluster is in use.';

/**
 * The free share (0..1, below 0 when over-committed) of memory and CPU after this desktop, and of the storage pool, and
 * whether the desktop fits.
 */
export function headroom(m: MemberLoad, want: Want): { score: number; fits: boolean } {
  const memUsed = Math.max(m.memoryUsed, m.desktops * want.memoryBytes);
  const cpuUsed = Math.max(m.load ?? 0, m.desktops * want.cpus);
  const memFree = m.memoryTotal - memUsed - want.memoryBytes;
  const cpuFree = m.cpus - cpuUsed - want.cpus;
  const storageFree = m.storageTotal ? (m.storageTotal - (m.storageUsed ?? 0)) / m.storageTotal : 1;
  const score = Math.min(m.memoryTotal > 0 ? memFree / m.memoryTotal : -1, m.cpus > 0 ? cpuFree / m.cpus : -1, storageFree);
  return { score, fits: memFree >= 0 && cpuFree >= 0 };
}

export function place(members: MemberLoad[], want: Want): Placement {
  const online = members.filter((m) => m.online);
  if (!online.length) return { error: NO_MEMBER_ONLINE };
  const candidates = want.gpu ? online.filter((m) => m.gpus - m.gpuDesktops > 0) : online;
  if (!candidates.length) return { error: NO_FREE_GPU };
  if (want.pin) return candidates.some((m) => m.name === want.pin) ? { member: want.pin } : { error: want.gpu ? NO_FREE_GPU : NO_MEMBER_ONLINE };
  const rated = candidates.map((m) => ({ m, ...headroom(m, want) }));
  const pool = rated.some((r) => r.fits) ? rated.filter((r) => r.fits) : rated;
  pool.sort((a, b) => b.score - a.score || a.m.desktops - b.m.desktops || a.m.name.localeCompare(b.m.name));
  return { member: pool[0]!.m.name };
}
