/**
 * What watching online desktops costs the host: the reconciler looks at each online desktop every 5 s. Measured on
 * the host's real LXD with N idle desktops for D seconds per phase, as CPU of the LXD daemon (with the processes it
 * forks and reaps) and of this process (the server's side of the looks), in % of one core:
 *   - baseline: the look as it was, the instance's /state and an RFB probe through an exec per look;
 *   - product: the lxd provider's describe (the instance's record and the desktop's link, an exec only as fallback).
 * Baseline, product, baseline again (the links stay open in the second baseline: their own cost is in both).
 * Run as root (LXD is prepared as `npm start` prepares it).
 *
 *   npx tsx bench/looks.ts [desktops (default 10)] [seconds per phase (default 60)]
 */
import { randomUUID } from 'node:crypto';
import { instanceOf } from '../server/src/modules/machines/providers/lxd/provider';
import { socketInInstance } from '../server/src/modules/machines/providers/lxd/exec-stream';
import { rfbAnswers } from '../server/src/modules/machines/providers/rfb';
import { HEALTH_EVERY_MS } from '../server/src/modules/machines/reconciler-steps';
import { lxdDeployment } from '../server/test/lxd-fixtures';
import { until } from '../server/test/machines-desktops';
import { lxdDaemonCpu } from './cpu-split';
import { ratio } from './stats';
import { describeHost } from './host';

const N = Number(process.argv[2] ?? 10);
const SECONDS = Number(process.argv[3] ?? 60);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Looks at every desktop every 5 s (spread over the interval) for SECONDS; answers % of a core and looks that failed. */
async function phase(look: (id: string) => Promise<boolean>, ids: string[]) {
  const d0 = lxdDaemonCpu();
  const o0 = ownCpu();
  const t0 = Date.now();
  let failed = 0;
  let looks = 0;
  await Promise.all(
    ids.map(async (id, i) => {
      await sleep((HEALTH_EVERY_MS * i) / ids.length);
      while (Date.now() - t0 < SECONDS * 1000) {
        const began = Date.now();
        looks++;
        if (!(await look(id))) failed++;
        await sleep(Math.max(0, HEALTH_EVERY_MS - (Date.now() - began)));
      }
    }),
  );
  const s = (Date.now() - t0) / 1000;
  return { daemon: ((lxdDaemonCpu() - d0) / s) * 100, own: ((ownCpu() - o0) / s) * 100, looks, failed };
}

async function main() {
  console.log(describeHost());
  const d = await lxdDeployment({ memoryMb: 1024, pids: 400, diskMb: 200 });
  const ids = Array.from({ length: N }, () => randomUUID());
  try {
    console.log(`starting ${N} desktops…`);
    await Promise.all(ids.map((machineId) => d.provider.start({ machineId, name: 'Looked at' })));
    const oldLook = async (id: string) => {
      const name = instanceOf(id);
      const s = await d.lxd.get<{ status: string }>(`/1.0/instances/${name}/state`);
      return s.status === 'Running' && rfbAnswers({ ref: { instance: name, project: d.project, socket: '/run/hyperdesk/vnc.sock' }, open: () => socketInInstance(d.lxd, name, '/run/hyperdesk/vnc.sock') }, 3000);
    };
    const newLook = async (id: string) => (await d.provider.describe(id)).state === 'running';
    await Promise.all(ids.map((id) => until(`desktop ${id} answers`, () => oldLook(id), 600_000, 1000)));
    await sleep(10_000); // the desktops settle after their start
    const rows: [string, Awaited<ReturnType<typeof phase>>][] = [];
    rows.push(['baseline (exec per look)', await phase(oldLook, ids)]);
    rows.push(['product (link)', await phase(newLook, ids)]);
    rows.push(['baseline again', await phase(oldLook, ids)]);
    const base = (rows[0]![1].daemon + rows[0]![1].own + rows[2]![1].daemon + rows[2]![1].own) / 2;
    console.log(`\n${N} idle desktops, each looked at every ${HEALTH_EVERY_MS / 1000} s, ${SECONDS} s a phase (% of one core):`);
    for (const [what, r] of rows) {
      console.log(`  ${what.padEnd(26)} LXD ${r.daemon.toFixed(1).padStart(5)}%  this process ${r.own.toFixed(1).padStart(5)}%  total ${(r.daemon + r.own).toFixed(1).padStart(5)}% (${ratio(r.daemon + r.own, base)} baseline)  looks ${r.looks}, failed ${r.failed}`);
    }
  } finally {
    await Promise.all(ids.map((id) => d.provider.destroy(id).catch(() => undefined)));
    await d.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
