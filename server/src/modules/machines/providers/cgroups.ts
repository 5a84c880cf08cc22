import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';
const CGROUP2_MAGIC = 0x63677270;
const V1_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;

export interface Limits {
  memoryMb: number;
  pids: number;
  cpuShares: number;
}

/**
 * One machine's cgroup (named after its Unix user) under `hyperdesk/` in every controller we use: cgroup v1
 * (memory, pids, cpu hierarchies) or v2 (one unified tree). Where neither is writable, `kind` is 'none' and the
 * supervisor falls back to rlimits (`ulimitArgs`).
 */
export interface MachineCgroup {
  kind: 'v1' | 'v2' | 'none';
  /** cgroup.procs files the supervisor writes its pid to. */
  procsFiles: string[];
  /** Applies the limits (creating the groups); the CPU share starts `startBoost` times higher (see cpuSetting). */
  create(limits: Limits, startBoost?: number): void;
  /**
   * The file and value that set the group's CPU share to `shares` (cpu.shares on v1, cpu.weight on v2), or null
   * without a CPU controller: the supervisor writes it once the desktop's VNC listens, ending the start boost.
   */
  cpuSetting(shares: number): { file: string; value: string } | null;
  /** Pids in the group (any controller). */
  pids(): number[];
  /** How many processes the kernel's OOM killer ended in this group since it was created. */
  oomKills(): number;
  /** Removes the (empty) groups; true when none is left. */
  remove(): boolean;
}

const MAX_SHARES = 262_144;
/** cgroup v2's cpu.weight (1..10000) for a v1 cpu.shares value (2..262144), as systemd maps them. */
const weightOf = (shares: number) => String(Math.max(1, Math.round(1 + ((shares - 2) * 9999) / 262142)));

function kindHere(): 'v1' | 'v2' | 'none' {
  try {
    if (statfsSync(ROOT).type === CGROUP2_MAGIC) return 'v2';
  } catch {
    return 'none';
  }
  return V1_CONTROLLERS.every((c) => existsSync(path.join(ROOT, c, 'cgroup.procs'))) ? 'v1' : 'none';
}

let cachedKind: 'v1' | 'v2' | 'none' | undefined;
export const cgroupKind = () => (cachedKind ??= kindHere());

const read = (f: string) => {
  try {
    return readFileSync(f, 'utf8');
  } catch {
    return '';
  }
};
const field = (text: string, key: string) => Number(text.match(new RegExp(`^${key} (\\d+)`, 'm'))?.[1] ?? 0);

function dirs(name: string): string[] {
  const kind = cgroupKind();
  if (kind === 'v2') return [path.join(ROOT, 'hyperdesk', name)];
  if (kind === 'v1') return V1_CONTROLLERS.map((c) => path.join(ROOT, c, 'hyperdesk', name));
  return [];
}

export function machineCgroup(name: string): MachineCgroup {
  const kind = cgroupKind();
  const ds = dirs(name);
  return {
    kind,
    procsFiles: ds.map((d) => path.join(d, 'cgroup.procs')),
    create(l, startBoost = 1) {
      const shares = Math.min(MAX_SHARES, Math.round(l.cpuShares * startBoost));
      if (kind === 'v2') {
        // Controllers must be enabled for the children of each level.
        for (const parent of [ROOT, path.join(ROOT, 'hyperdesk')]) {
          mkdirSync(parent, { recursive: true });
          writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+memory +pids +cpu');
        }
        const d = ds[0]!;
        mkdirSync(d, { recursive: true });
        writeFileSync(path.join(d, 'memory.max'), String(l.memoryMb * 1024 * 1024));
        if (existsSync(path.join(d, 'memory.swap.max'))) writeFileSync(path.join(d, 'memory.swap.max'), '0');
        writeFileSync(path.join(d, 'pids.max'), String(l.pids));
        // cgroup v1 shares (2..262144, default 1024) → v2 weight (1..10000, default 100).
        writeFileSync(path.join(d, 'cpu.weight'), weightOf(shares));
      } else if (kind === 'v1') {
        for (const d of ds) mkdirSync(d, { recursive: true });
        const [mem, pids, cpu] = ds as [string, string, string];
        writeFileSync(path.join(mem, 'memory.limit_in_bytes'), String(l.memoryMb * 1024 * 1024));
        // No swapping past the limit where swap accounting exists (memsw must be ≥ the memory limit).
        if (existsSync(path.join(mem, 'memory.memsw.limit_in_bytes'))) {
          try {
            writeFileSync(path.join(mem, 'memory.memsw.limit_in_bytes'), String(l.memoryMb * 1024 * 1024));
          } catch {
            /* swap accounting off */
          }
        }
        writeFileSync(path.join(pids, 'pids.max'), String(l.pids));
        writeFileSync(path.join(cpu, 'cpu.shares'), String(shares));
      }
    },
    cpuSetting(shares) {
      if (kind === 'v2') return { file: path.join(ds[0]!, 'cpu.weight'), value: weightOf(shares) };
      if (kind === 'v1') return { file: path.join(ds[2]!, 'cpu.shares'), value: String(shares) };
      return null;
    },
    pids() {
      const all = new Set<number>();
      for (const d of ds) for (const line of read(path.join(d, 'cgroup.procs')).split('\n')) if (line) all.add(Number(line));
      return [...all];
    },
    oomKills() {
      if (kind === 'v2') return field(read(path.join(ds[0]!, 'memory.events')), 'oom_kill');
      if (kind === 'v1') return field(read(path.join(ds[0]!, 'memory.oom_control')), 'oom_kill');
      return 0;
    },
    remove() {
      let ok = true;
      for (const d of ds) {
        try {
          if (existsSync(d)) rmdirSync(d);
        } catch {
          ok = false;
        }
      }
      return ok;
    },
  };
}

/** Names of the machine cgroups that exist (any controller). */
export function cgroupNames(): string[] {
  const kind = cgroupKind();
  const parents = kind === 'v2' ? [path.join(ROOT, 'hyperdesk')] : kind === 'v1' ? V1_CONTROLLERS.map((c) => path.join(ROOT, c, 'hyperdesk')) : [];
  const names = new Set<string>();
  for (const p of parents) {
    try {
      for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) names.add(e.name);
    } catch {
      /* no such hierarchy yet */
    }
  }
  return [...names];
}

/** rlimits for hosts without writable cgroups: processes per (machine) uid and address space. */
export function ulimitArgs(kind: MachineCgroup['kind'], l: Limits): string {
  return kind === 'none' ? `-u ${l.pids} -v ${l.memoryMb * 1024}` : '';
}
