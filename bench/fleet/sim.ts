import { MIN, PROVIDERS, rng, uniform, WEEK, type ProviderModel, type Rand, type Workload } from './model';

/** How the fleet is run: spare running machines for single users, and pre-starting courses before class. */
export interface Policy {
  pool: number;
  prestart: boolean;
}

export interface Outcome {
  provider: string;
  policy: Policy;
  /** Seconds from Start (single users) or Connect (students) to a usable desktop. */
  single: number[];
  student: number[];
  /** GPU-hours of machines running while nobody used them, and of all machines. */
  idleGpuHours: number;
  gpuHours: number;
}

/** Students come up to 5 minutes early; the course's machines must be up by then. */
export const EARLY_ARRIVAL = 5 * MIN;
/** Pre-start lead per provider: the early arrivals plus its slowest (cold) start, with a margin. */
const leadFor = (p: ProviderModel) => EARLY_ARRIVAL + (p.nodeLingerSec === Infinity ? MIN : p.nodeLingerSec > 0 ? 10 * MIN : 2 * MIN);
const CONNECT = 1; // seconds from a running desktop to the first frame (bench:stream measures it)

/** GPU nodes of a Kubernetes cluster: an emptied node lingers, then scales down; VMs and the local host need none. */
class Nodes {
  private free: number[] = [];
  constructor(private readonly linger: number) {}
  /** True when a node is ready (a warm pod start), false when one must be added (a cold start). */
  take(t: number): boolean {
    if (this.linger === Infinity) return true;
    this.free = this.free.filter((at) => at + this.linger >= t);
    if (this.free.length === 0) return false;
    this.free.pop();
    return true;
  }
  give(t: number) {
    if (this.linger !== Infinity) this.free.push(t);
  }
}

type Event = { at: number; order: number; run: () => void };

/** Replays the week against one provider and policy. */
export function simulate(w: Workload, p: ProviderModel, policy: Policy, seed = 11): Outcome {
  const r: Rand = rng(seed);
  const nodes = new Nodes(p.nodeLingerSec);
  const known = new Set<string>(); // machines that exist (stopped or running): start from stopped, not cold
  const out: Outcome = { provider: p.name, policy, single: [], student: [], idleGpuHours: 0, gpuHours: 0 };
  let idle = 0;
  let busy = 0;
  const queue: Event[] = [];
  let seq = 0;
  const at = (t: number, run: () => void) => queue.push({ at: t, order: seq++, run });

  /** Starts a machine at t; answers when it is usable. VMs keep their disk: only the first start is cold. */
  function start(t: number, machine: string): number {
    if (p.nodeLingerSec === 0) {
      const first = !known.has(machine);
      known.add(machine);
      return t + (first ? p.cold(r) : p.fromStopped(r));
    }
    return t + (nodes.take(t) ? p.fromStopped(r) : p.cold(r));
  }
  const stop = (t: number) => nodes.give(t);

  // The warm pool: ready times of spare running machines (single users only; courses use the calendar).
  const pool: number[] = [];
  const refill = (t: number) => pool.push(start(t, `pool-${seq}`));
  for (let i = 0; i < policy.pool; i++) refill(0);

  for (const s of w.sessions.filter((x) => x.kind === 'single')) {
    at(s.arrive, () => {
      pool.sort((a, b) => a - b);
      const ready = pool.length && pool[0]! <= s.arrive ? pool.shift()! : null;
      let usable: number;
      if (ready !== null) {
        idle += s.arrive - ready;
        usable = s.arrive + p.fromPool(r);
        refill(s.arrive);
      } else {
        usable = start(s.arrive, s.machine);
      }
      out.single.push(usable - s.arrive + CONNECT);
      const end = s.leave + s.idleTail;
      busy += Math.max(0, s.leave - usable);
      idle += s.idleTail + Math.max(0, usable - s.arrive);
      at(end, () => stop(end));
    });
  }

  for (const c of w.classes) {
    const startAll = policy.prestart ? c.start - leadFor(p) : c.start - uniform(r, 0, 5 * MIN);
    at(startAll, () => {
      const students = w.sessions.filter((s) => s.kind === 'student' && s.machine.startsWith(`c${c.course}s`) && Math.abs(s.arrive - c.start) < 30 * MIN);
      for (let seat = 0; seat < w.seatsPerCourse; seat++) {
        const machine = `c${c.course}s${seat}`;
        const usable = start(startAll, machine);
        const who = students.find((s) => s.machine === machine);
        let used = 0;
        if (who) {
          out.student.push(Math.max(0, usable - who.arrive) + CONNECT);
          used = Math.max(0, who.leave - Math.max(usable, who.arrive));
        }
        busy += used;
        idle += c.end - startAll - used;
        at(c.end, () => stop(c.end));
      }
    });
  }

  queue.sort((a, b) => a.at - b.at || a.order - b.order);
  // Events may add later events (stops); keep the queue ordered as it grows.
  for (let i = 0; i < queue.length; i++) {
    queue[i]!.run();
    const rest = queue.splice(i + 1);
    rest.sort((a, b) => a.at - b.at || a.order - b.order);
    queue.push(...rest);
  }
  for (const ready of pool) idle += Math.max(0, WEEK - ready);
  out.idleGpuHours = idle / 3600;
  out.gpuHours = (idle + busy) / 3600;
  return out;
}

export function percentile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export const POLICIES: Policy[] = [
  { pool: 0, prestart: false },
  { pool: 0, prestart: true },
  { pool: 8, prestart: true },
  { pool: 24, prestart: true },
];

export const runAll = (w: Workload) => PROVIDERS.flatMap((p) => POLICIES.map((policy) => simulate(w, p, policy)));
