/**
 * The machine provider on this host (issue 20): the LXD container (`lxd`, prepared by scripts/lxd/host-setup.sh as
 * npm start prepares it), driven through its MachineProvider exactly as the reconciler drives it. (Until it was
 * deleted, the bubblewrap `local` provider was measured beside it in the same run: README, Benchmarks.)
 *   - start of an existing (stopped) machine → online (the provider reports it running and VNC greets) and →
 *     content (the desktop's terminal window is up), p50/p95 over RUNS;
 *   - the first start of a new machine (its instance made from the image, then started) → online and → content,
 *     p50/p95 over RUNS new machines, each destroyed after; alternated with as many whose desktop was made ahead
 *     (the provider's prepare, as the server's preparer does while nothing starts), then started;
 *   - 10 existing machines started together: until all are online;
 *   - Start All and Stop All of a 40-machine classroom (existing machines): until all online / all stopped;
 *   - memory per idle desktop: PSS of every process of the desktop (its container's processes and its
 *     `[lxc monitor]`), with the whole classroom running and settled.
 *
 *   npx tsx bench/providers.ts [runs (default 5)] [classroom size (default 40)]
 * Environment: START_CONCURRENCY (8, the reconciler's): starts in flight during Start All; POLL_MS (20): the wait
 * between looks at a machine not yet online (the reconciler looks again every 250 ms); KEEP_DIR: the deployment's
 * data dir, kept with its machines after the run, so the next run with the same KEEP_DIR measures the same instances
 * (no 40 new instances made first, none deleted after: btrfs deleting them slows every run that follows);
 * LXD_ENGINE=incus: the deployment on Incus (beside this host's LXD).
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { MachineProvider } from '../server/src/modules/machines/providers/types';
import { inPool } from '../server/src/modules/machines/pool';
import { vncHandshake } from '../server/test/machines-desktops';
import { INCUS, LXD, lxdDeployment } from '../server/test/lxd-fixtures';
import { cpuSnapshot, cpuSplit } from './cpu-split';
import { fmtBytes, fmtMs, percentile, ratio } from './stats';
import { describeHost } from './host';

const RUNS = Number(process.argv[2] ?? 5);
const CLASS = Number(process.argv[3] ?? 40);
const START_CONCURRENCY = Number(process.env.START_CONCURRENCY ?? 8);
const POLL_MS = Number(process.env.POLL_MS ?? 20);
const KEEP_DIR = process.env.KEEP_DIR;
/** LXD_ENGINE=incus: the same on Incus (host-setup.sh installs it beside LXD; its desktops share the image's /usr). */
const ENGINE = process.env.LXD_ENGINE === 'incus' ? INCUS : LXD;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Subject {
  name: string;
  provider: MachineProvider;
  /** The desktop's window titles (its terminal is titled with the machine's name). */
  titles(id: string): string[];
  /** PSS of one desktop's processes. */
  pss(id: string): number;
  close(): Promise<void>;
}

const pssOf = (pid: number) => {
  try {
    return Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
};

async function lxdSubject(): Promise<Subject> {
  if (KEEP_DIR) mkdirSync(KEEP_DIR, { recursive: true });
  const d = await lxdDeployment({ memoryMb: 1024, pids: 400, diskMb: 200 }, KEEP_DIR, ENGINE);
  const cgroupName = (id: string) => `${d.project}_hd-${id}`;
  return {
    name: 'lxd (container)',
    provider: d.provider,
    titles: (id) => {
      try {
        const out = execFileSync(ENGINE.cli, ['exec', `hd-${id}`, '--project', d.project, '--user', '1000', '--env', 'DISPLAY=:0', '--env', 'XAUTHORITY=/run/hyperdesk/xauth', '--', 'xwininfo', '-root', '-tree'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
        return [...out.matchAll(/0x[0-9a-f]+ "([^"]*)"/g)].map((m) => m[1]!);
      } catch {
        return [];
      }
    },
    pss: (id) => {
      let sum = 0;
      for (const e of readdirSync('/proc')) {
        if (!/^\d+$/.test(e)) continue;
        try {
          const cg = readFileSync(`/proc/${e}/cgroup`, 'utf8');
          const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
          if (cg.includes(`lxc.payload.${cgroupName(id)}/`) || cg.includes(`lxc.payload.${cgroupName(id)}\n`) || cmd.includes(`[lxc monitor] ${ENGINE.dir}/containers ${cgroupName(id)}`)) sum += pssOf(Number(e));
        } catch {
          /* exited */
        }
      }
      return sum;
    },
    close: async () => (KEEP_DIR ? d.lxd.close() : d.close()),
  };
}

async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 180_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await fn())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/** A desktop's content: its terminal is up, titled with its own machine's name (the name its init asks the engine for). */
const showsContent = (s: Subject, m: { machineId: string; name: string }, ms?: number, what = `content of ${m.name} (hd-${m.machineId})`) =>
  until(what, () => s.titles(m.machineId).includes(m.name), ms);

const online = async (s: Subject, id: string) => {
  const d = await s.provider.describe(id);
  return d.state === 'running' && !!d.endpoint && (await vncHandshake(d.endpoint, '127.0.0.1', 2000).then(() => true, () => false));
};

/**
 * PSS of an idle desktop (the mean of the first 5, or of all in a smaller classroom), with all of the classroom
 * running: once every desktop shows its content, looked at every 5 s until it moves less than 1% (at most a minute).
 * Read 3 s after the last was online instead, it counted desktops still starting, whose shared files fewer desktops
 * had mapped yet: 105 MiB where the settled figure was 92 (2026-11-29).
 */
async function idlePss(s: Subject, machines: { machineId: string; name: string }[]): Promise<number> {
  for (const m of machines) await showsContent(s, m);
  const some = machines.slice(0, 5); // a classroom of 2 was divided by 5 (64 MiB read, 2026-12-02)
  const mean = () => some.reduce((sum, m) => sum + s.pss(m.machineId), 0) / some.length;
  let last = mean();
  for (let i = 0; i < 12; i++) {
    await sleep(5000);
    const now = mean();
    if (Math.abs(now - last) < last * 0.01) return now;
    last = now;
  }
  return last;
}

/** Starts an existing machine: ms to online and to content. */
async function startOnce(s: Subject, m: { machineId: string; name: string }): Promise<{ online: number; content: number }> {
  const t0 = performance.now();
  await s.provider.start(m);
  await until('online', () => online(s, m.machineId));
  const on = performance.now() - t0;
  await showsContent(s, m);
  return { online: on, content: performance.now() - t0 };
}

/** The classroom's machines: new ones, or under KEEP_DIR those of the run before (as many more as the size asks). */
function classroom(): { machines: { machineId: string; name: string }[]; allNew: boolean } {
  const file = KEEP_DIR ? `${KEEP_DIR}/bench-machines.json` : null;
  const kept: { machineId: string; name: string }[] = file && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : [];
  const machines = Array.from({ length: CLASS }, (_, i) => kept[i] ?? { machineId: randomUUID(), name: `Bench desk ${i + 1}` });
  if (file) writeFileSync(file, JSON.stringify(machines));
  return { machines, allNew: kept.length === 0 };
}

async function measure(s: Subject) {
  const { machines, allNew } = classroom();
  const first = machines[0]!;
  // Make every machine once (first start: the instance is created), then stop them all. Timed where all are new: a
  // new course's first Start All.
  const { ms: madeAll } = await startAllUntilOnline(s, machines);
  if (allNew) console.log(`  Start All of ${CLASS} new machines → all online: ${fmtMs(madeAll)}`);
  const pss = await idlePss(s, machines);
  await Promise.all(machines.map((m) => s.provider.stop(m.machineId)));

  const single: { online: number; content: number }[] = [];
  for (let r = 0; r < RUNS; r++) {
    single.push(await startOnce(s, first));
    await s.provider.stop(first.machineId);
  }
  // A new machine's first start, alternated: its desktop made by the start (the baseline), and made ahead as the
  // server's preparer makes it while nothing starts (machines/preparer.ts; untimed), then started.
  const fresh: { online: number; content: number }[] = [];
  const prepared: { online: number; content: number }[] = [];
  for (let r = 0; r < RUNS; r++) {
    const m = { machineId: randomUUID(), name: `Bench new desk ${r + 1}` };
    fresh.push(await startOnce(s, m));
    await s.provider.destroy(m.machineId);
    const p = { machineId: randomUUID(), name: `Bench prepared desk ${r + 1}` };
    await s.provider.prepare?.(p);
    prepared.push(await startOnce(s, p));
    await s.provider.destroy(p.machineId);
  }
  const t10 = performance.now();
  await Promise.all(machines.slice(0, 10).map((m) => s.provider.start(m)));
  await Promise.all(machines.slice(0, 10).map((m) => until('online', () => online(s, m.machineId))));
  const ten = performance.now() - t10;
  await Promise.all(machines.slice(0, 10).map((m) => s.provider.stop(m.machineId)));

  const cpuBefore = cpuSnapshot({ 'this bench (the provider)': process.pid });
  const { ms: startAll, calls, onlineAt } = await startAllUntilOnline(s, machines);
  const cpuOnline = cpuSnapshot({ 'this bench (the provider)': process.pid });
  console.log(`  Start All: start calls p50 ${fmtMs(percentile(calls, 50))} max ${fmtMs(Math.max(...calls))}; online p50 ${fmtMs(percentile(onlineAt, 50))}`);
  console.log('  Start All until all online, where the CPU went:');
  for (const line of cpuSplit(cpuBefore, cpuOnline)) console.log(`    ${line}`);
  // After the timing (each look is an exec in the desktop): every desktop shows its own machine's name, which its
  // init asks of the engine while the others start (one desktop of 40 once went on as "Hyperdesk": its one ask, given
  // 2 s, brought no name).
  for (const m of machines) await showsContent(s, m, 60_000, `content of ${m.name} after Start All`);
  console.log(`  Start All: every desktop shows its own name`);
  const tStop = performance.now();
  await Promise.all(machines.map((m) => s.provider.stop(m.machineId)));
  await until('all stopped', async () => (await s.provider.list()).length === 0);
  const stopAll = performance.now() - tStop;
  const newMadeAhead = allNew ? await newClassMadeAhead(s) : null;
  return { single, fresh, prepared, ten, startAll, stopAll, pss, newMade: allNew ? madeAll : null, newMadeAhead };
}

/**
 * Start All: the reconciler starts START_CONCURRENCY (8) at a time and looks at each it started until it is online.
 * A machine is looked at from its start on, as the reconciler does (it describes a machine in the step that starts
 * it): looking every 20 ms at the machines still queued asked LXD for each one's record twice a look, and doubled
 * Start All on a 2-core EPYC (62 s against 31 s, the LXD daemon 49 CPU-s against 17; 2026-12-02).
 */
async function startAllUntilOnline(s: Subject, machines: { machineId: string; name: string }[]) {
  const t0 = performance.now();
  const calls: number[] = [];
  const onlineAt: number[] = [];
  const looks: Promise<void>[] = [];
  await inPool(machines, START_CONCURRENCY, async (m) => {
    const t = performance.now();
    await s.provider.start(m);
    calls.push(performance.now() - t);
    looks.push(
      until('online', () => online(s, m.machineId), 600_000).then(() => {
        onlineAt.push(performance.now() - t0);
      }),
    );
  });
  await Promise.all(looks);
  return { ms: performance.now() - t0, calls, onlineAt };
}

/**
 * A new class's first Start All as the server now has it: a second classroom of new machines whose desktops the
 * preparer made one after another while nothing started (untimed), then Start All until all are online. Its baseline,
 * the same run's first Start All of new machines, made their desktops while they started. Deleted after.
 */
async function newClassMadeAhead(s: Subject): Promise<number> {
  const machines = Array.from({ length: CLASS }, (_, i) => ({ machineId: randomUUID(), name: `Bench made-ahead desk ${i + 1}` }));
  try {
    for (const m of machines) await s.provider.prepare?.(m);
    const { ms } = await startAllUntilOnline(s, machines);
    await Promise.all(machines.map((m) => s.provider.stop(m.machineId)));
    return ms;
  } finally {
    for (const m of machines) await s.provider.destroy(m.machineId).catch(() => undefined);
  }
}

const p50p95 = (ms: number[]) => `p50 ${fmtMs(percentile(ms, 50))}  p95 ${fmtMs(percentile(ms, 95))}`;

async function main() {
  console.log(describeHost());
  console.log(`Machine providers on this host: ${RUNS} starts of an existing machine, 10 together, a classroom of ${CLASS}.`);
  const results = new Map<string, Awaited<ReturnType<typeof measure>>>();
  for (const make of [lxdSubject]) {
    const s = await make();
    try {
      results.set(s.name, await measure(s));
    } finally {
      await s.close();
    }
  }
  for (const [name, r] of results) {
    console.log(`\n${name}`);
    console.log(`  start → online:  ${p50p95(r.single.map((x) => x.online))}`);
    console.log(`  start → content: ${p50p95(r.single.map((x) => x.content))}`);
    console.log(`  first start of a new machine → online: ${p50p95(r.fresh.map((x) => x.online))};  → content: ${p50p95(r.fresh.map((x) => x.content))}`);
    const c = (xs: { content: number }[]) => percentile(xs.map((x) => x.content), 50);
    console.log(`  … its desktop made ahead → online: ${p50p95(r.prepared.map((x) => x.online))};  → content: ${p50p95(r.prepared.map((x) => x.content))} (made at the start: ${ratio(c(r.fresh), c(r.prepared))} as long at p50)`);
    console.log(`  10 together → all online: ${fmtMs(r.ten)}`);
    console.log(`  Start All of ${CLASS} → all online: ${fmtMs(r.startAll)};  Stop All → all stopped: ${fmtMs(r.stopAll)}`);
    if (r.newMade !== null && r.newMadeAhead !== null) {
      console.log(`  a new class's first Start All of ${CLASS} → all online: desktops made at the start ${fmtMs(r.newMade)}, made ahead ${fmtMs(r.newMadeAhead)} (${ratio(r.newMade, r.newMadeAhead)} as long made at the start)`);
    }
    console.log(`  memory per idle desktop (PSS): ${fmtBytes(r.pss)}`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
