/**
 * The fleet simulation's inputs: a seeded random source, the start-time models of each provider (from public
 * figures, see docs/providers.md) and a week of demand (single users and classrooms).
 */

/** Mulberry32: a small seeded generator, so every run of the simulation prints the same figures. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rand = () => number;
export const uniform = (r: Rand, lo: number, hi: number) => lo + (hi - lo) * r();
/** Standard normal by Box-Muller. */
export const normal = (r: Rand) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());

export const MIN = 60;
export const HOUR = 3600;
export const DAY = 86_400;
export const WEEK = 7 * DAY;

/** How long a machine takes to be usable, by how it is started (seconds). */
export interface ProviderModel {
  name: string;
  /** A machine taken from the running warm pool (home volume attached, session handed over). */
  fromPool(r: Rand): number;
  /** A machine that exists stopped (disk kept): EC2 start-from-stopped, or a pod on a node that is up. */
  fromStopped(r: Rand): number;
  /** Nothing to reuse: a new VM, or a pod that first needs a new GPU node. */
  cold(r: Rand): number;
  /** Kubernetes keeps an emptied GPU node this long before scaling it down (a later pod starts warm on it). */
  nodeLingerSec: number;
}

export const PROVIDERS: ProviderModel[] = [
  {
    name: 'local (this host)',
    fromPool: (r) => uniform(r, 0.1, 0.3),
    fromStopped: (r) => uniform(r, 0.3, 1.2), // bench:machines: start → VNC handshake p50 0.32 s
    cold: (r) => uniform(r, 0.3, 1.2),
    nodeLingerSec: Infinity,
  },
  {
    name: 'kubernetes (GPU node pool)',
    fromPool: (r) => uniform(r, 2, 4),
    fromStopped: (r) => uniform(r, 6, 12), // pod on a ready node, image cached: scheduling + container + X + agent
    cold: (r) => uniform(r, 180, 300), // GPU node scale-up: VM + driver + image pull
    nodeLingerSec: 10 * MIN,
  },
  {
    name: 'cloud VMs (EC2 g4dn.xlarge)',
    fromPool: (r) => uniform(r, 2, 4),
    fromStopped: (r) => Math.max(15, 21 + 2 * normal(r)), // start from stopped ≈ 21 s, disk kept
    cold: (r) => Math.max(18, 25 + 3 * normal(r)), // a new VM ≈ 25 s
    nodeLingerSec: 0,
  },
];

/** One use of a machine: a single user's session, or a student's part of a class. */
export interface Session {
  kind: 'single' | 'student';
  /** Single users: their own machine; students: their course seat. */
  machine: string;
  arrive: number;
  leave: number;
  /** Single users who leave without Stop are stopped by idle protection after IDLE_STOP_MINUTES. */
  idleTail: number;
}

/** A class of a course: all its machines are needed from `start` to `end`. */
export interface Class {
  course: number;
  start: number;
  end: number;
}

export interface Workload {
  sessions: Session[];
  classes: Class[];
  singleUsers: number;
  seatsPerCourse: number;
}

const IDLE_STOP = 20 * MIN;

/** A week: 300 single users (evening and morning peaks) and 10 courses of 40 with two 2-hour classes each. */
export function week(seed = 7): Workload {
  const r = rng(seed);
  const singleUsers = 300;
  const seatsPerCourse = 40;
  const sessions: Session[] = [];
  for (let u = 0; u < singleUsers; u++) {
    for (let d = 0; d < 7; d++) {
      if (r() > 0.45) continue;
      const peak = r() < 0.4 ? 10 : 20;
      const arrive = d * DAY + Math.min(DAY - HOUR, Math.max(0, (peak + 2.5 * normal(r)) * HOUR));
      const length = Math.min(6 * HOUR, Math.max(10 * MIN, 90 * MIN * Math.exp(0.6 * normal(r))));
      sessions.push({ kind: 'single', machine: `u${u}`, arrive, leave: arrive + length, idleTail: r() < 0.5 ? 0 : IDLE_STOP });
    }
  }
  const classes: Class[] = [];
  for (let c = 0; c < 10; c++) {
    for (const d of [c % 5, (c % 5) + 2]) {
      const start = d * DAY + (8 + (c % 5) * 2) * HOUR;
      classes.push({ course: c, start, end: start + 2 * HOUR });
      for (let s = 0; s < seatsPerCourse; s++) {
        if (r() > 0.9) continue;
        const arrive = start + uniform(r, -5 * MIN, 10 * MIN); // sim.ts EARLY_ARRIVAL
        sessions.push({ kind: 'student', machine: `c${c}s${s}`, arrive, leave: start + 2 * HOUR - uniform(r, 0, 10 * MIN), idleTail: 0 });
      }
    }
  }
  sessions.sort((a, b) => a.arrive - b.arrive);
  return { sessions, classes, singleUsers, seatsPerCourse };
}
