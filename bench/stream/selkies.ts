import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { instanceOf } from '../../server/src/modules/machines/providers/lxd/provider';
import { api, statusOf, waitOnline, type Buyer } from '../../e2e/tests/connect-helpers';
import { asUser, PATCH, sleep, startSceneFromShell, until, waitIn, writeScene } from './desktop';
import { findInInstance, usage, useBetween } from './netns';
import { COLOURS, OBSERVE, showsColour, SNAPSHOT } from './page';
import { keyToPhoton, type Presses } from './presses';
import { BUSY } from './run';
import { fmtMs, percentile, ratio } from '../stats';

/**
 * Selkies-GStreamer beside ours (issue 21), on the same desktop (the WebRTC runs' machine, started again), the same
 * scene and the same shaped link, seen in the same Chromium through its own web client. It runs inside the desktop's
 * LXD instance as the desktop's user, from a bundle the operator assembles (SELKIES_BUNDLE; how, in
 * docs/benchmarks.md: Selkies' code and its Python packages are never in this repository), with settings that fit
 * the link as ours do: x264, 30 fps, 1,600 kbit/s, no TURN or STUN servers (the browser reaches the desktop's address).
 * Measured as ours: received fps, kbit/s and freeze time (getStats), key → photon on the same colour patch (both
 * readings), and its process's CPU and memory.
 */

export interface SelkiesRun {
  fps: number;
  kbps: number;
  freezePct: number;
  keys: Presses;
  cpu: number;
  rssMiB: number;
  detail: string;
}

type Stats = { t: number; rtc: null | { framesDecoded: number; bytes: number; freezeS: number; codec: string; width: number; height: number; rttS: number | null; packetsLost: number; packetsReceived: number } };

const PORT = 8080;
const DIR = '/opt/selkies';

/**
 * A call to our server, asked again once when its kept-alive connection was closed under it (a Selkies run leaves it
 * idle for a minute while that page loads, about when the server lets an idle connection go).
 */
async function again<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return call();
  }
}

function asRoot(project: string, machineId: string, argv: string[]): string {
  return execFileSync('lxc', ['exec', instanceOf(machineId), '--project', project, '--', ...argv], { encoding: 'utf8', timeout: 60_000 });
}

/** The bundle into the instance's /opt/selkies (deps/ from Debian's packages, shim/, selkies_gstreamer/, gst-web/). */
function install(project: string, machineId: string, bundle: string): void {
  asRoot(project, machineId, ['rm', '-rf', DIR, `/opt/${path.basename(bundle)}`]);
  execFileSync('lxc', ['file', 'push', '-r', '-q', bundle, `${instanceOf(machineId)}/opt/`, '--project', project], { timeout: 300_000 });
  if (path.basename(bundle) !== 'selkies') asRoot(project, machineId, ['mv', `/opt/${path.basename(bundle)}`, DIR]);
  asRoot(project, machineId, ['sh', '-c', `printf '{"iceServers":[]}' > ${DIR}/rtc.json`]);
}

/** Starts Selkies in the desktop as its user, detached; answers the instance's address. */
function start(project: string, machineId: string): string {
  const env = [
    `PYTHONPATH=${DIR}/shim:${DIR}/deps/usr/lib/python3/dist-packages:${DIR}`,
    `LD_LIBRARY_PATH=${DIR}/deps/usr/lib/x86_64-linux-gnu`,
    'DISPLAY=:0',
    'XAUTHORITY=/run/hyperdesk/xauth',
    'PULSE_SERVER=unix:/run/hyperdesk/pulse/native',
  ].join(' ');
  const flags = [
    `--addr=0.0.0.0 --port=${PORT} --web_root=${DIR}/gst-web --enable_basic_auth=false --encoder=x264enc`,
    `--framerate=30 --video_bitrate=1600 --enable_resize=false --enable_clipboard=false`,
    `--json_config=/tmp/selkies_config.json --rtc_config_json=${DIR}/rtc.json`,
  ].join(' ');
  // Only the detached command in the background, its own output redirected: a backgrounded list would keep a shell
  // holding the exec's output open, and lxc exec waits for it.
  asUser(project, machineId, `setsid nohup env ${env} python3 -m selkies_gstreamer ${flags} > /tmp/selkies.log 2>&1 < /dev/null &`);
  const out = execFileSync('lxc', ['list', instanceOf(machineId), '--project', project, '--format', 'csv', '--columns', '4'], { encoding: 'utf8' });
  const ip = /(\d+\.\d+\.\d+\.\d+)/.exec(out)?.[1];
  if (!ip) throw new Error(`the desktop has no IPv4 address: ${out}`);
  return ip;
}

async function measureOnce(tab: Page, project: string, machineId: string, seconds: number, samples: number): Promise<SelkiesRun> {
  // The scene, started from a shell in the desktop (ours types it into the xterm; here only the streamer differs).
  writeScene(project, machineId, BUSY);
  startSceneFromShell(project, machineId);
  await until(() => tab.evaluate(showsColour('b', PATCH.x, PATCH.y)) as Promise<boolean>, 'the colour patch through Selkies', 60_000);
  // The patch takes the keyboard as a click on it would (Selkies' pointer mapping is not what is measured).
  asUser(project, machineId, 'DISPLAY=:0 XAUTHORITY=/run/hyperdesk/xauth xdotool search --sync --limit 1 --name hd-bench-patch windowactivate --sync');
  await sleep(6000); // glxgears compiles its shaders
  const pids = findInInstance(instanceOf(machineId), (p) => p.comm.startsWith('python3') && p.cmdline.includes('selkies_gstreamer'));
  const cpu0 = pids.map(usage);
  const s0 = (await tab.evaluate(SNAPSHOT)) as Stats;
  await sleep(seconds * 1000);
  const s1 = (await tab.evaluate(SNAPSHOT)) as Stats;
  const cpu1 = pids.map(usage);
  if (!s0.rtc || !s1.rtc) throw new Error('no video statistics from Selkies-GStreamer’s peer connection');
  const dt = (s1.t - s0.t) / 1000;
  const [a, z] = [s0.rtc, s1.rtc];
  const lost = z.packetsLost - a.packetsLost;
  const got = z.packetsReceived - a.packetsReceived;
  const use = useBetween(cpu0, cpu1, dt);
  const keys = await keyToPhoton(tab, samples);
  return {
    fps: (z.framesDecoded - a.framesDecoded) / dt,
    kbps: ((z.bytes - a.bytes) * 8) / dt / 1000,
    freezePct: ((z.freezeS - a.freezeS) / dt) * 100,
    keys,
    cpu: use.cores,
    rssMiB: use.rssMiB,
    detail: `${z.codec} ${z.width}×${z.height}, loss ${((100 * lost) / Math.max(1, lost + got)).toFixed(2)}%, RTT ${z.rttS === null ? '?' : Math.round(z.rttS * 1000)} ms`,
  };
}

/** `runs` runs of Selkies-GStreamer on the buyer's machine: each starts it, measures, and stops the machine again. */
export async function selkiesRuns(o: { browser: Browser; base: string; project: string; buyer: Buyer; bundle: string; runs: number; seconds: number; samples: number }): Promise<SelkiesRun[]> {
  const { base, project, buyer: b } = o;
  const out: SelkiesRun[] = [];
  for (let i = 0; i < o.runs; i++) {
    await again(() => api(base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId }));
    await again(() => waitOnline(base, b.token, b.machineId, 600_000));
    if (i === 0) install(project, b.machineId, o.bundle);
    const ip = start(project, b.machineId);
    const url = `http://${ip}:${PORT}/`;
    // Its web server answers each request 2 s or more late while no client is connected (a blocking sleep in its
    // loop, v1.6.2): each try waits long enough, and so does the page.
    await until(() => fetch(`${url}health`, { signal: AbortSignal.timeout(15_000) }).then((r) => r.ok, () => false), 'Selkies-GStreamer to answer', 120_000);
    console.log(`Selkies-GStreamer run ${i + 1}: answering at ${url}`);
    const context = await o.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript({ content: OBSERVE });
    const tab = await context.newPage();
    try {
      await tab.goto(url, { timeout: 180_000 });
      await waitIn(tab, `${COLOURS} >= 1`, 'the first frame through Selkies-GStreamer', 180_000);
      console.log(`Selkies-GStreamer run ${i + 1}: the first frame`);
      out.push(await measureOnce(tab, project, b.machineId, o.seconds, o.samples));
    } catch (e) {
      let log = '';
      try {
        log = asUser(project, b.machineId, 'tail -n 30 /tmp/selkies.log');
      } catch {
        /* the log could not be read: the error stands alone */
      }
      throw new Error(`Selkies-GStreamer run ${i + 1} failed: ${(e as Error).message}\n${log}`, { cause: e });
    } finally {
      await context.close();
      await again(() => api(base, 'POST', '/v1/user/slot', b.token, { packId: b.machineId, terminate: true }));
      await until(async () => (await again(() => statusOf(base, b.token, b.machineId))) === 'offline', 'the machine to stop', 120_000);
    }
  }
  return out;
}

/** The comparison table: ours (the WebRTC runs) beside Selkies-GStreamer's runs. */
export function selkiesTable(ours: { fps: number; kbps: number; freezePct: number; latencies: number[]; fromPress: number[]; cpu: number; rssMiB: number }[], theirs: SelkiesRun[]): string[] {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const pp = (xs: number[]) => `${fmtMs(percentile(xs, 50))} / ${fmtMs(percentile(xs, 95))}`;
  const rows: [string, string, string, string][] = [];
  const num = (label: string, a: number, b: number, digits: number) => rows.push([label, a.toFixed(digits), b.toFixed(digits), ratio(a, b)]);
  num('received fps (mean of runs)', mean(ours.map((r) => r.fps)), mean(theirs.map((r) => r.fps)), 1);
  num('received kbit/s', mean(ours.map((r) => r.kbps)), mean(theirs.map((r) => r.kbps)), 0);
  num('freeze time %', mean(ours.map((r) => r.freezePct)), mean(theirs.map((r) => r.freezePct)), 1);
  const [ol, tl] = [ours.flatMap((r) => r.latencies), theirs.flatMap((r) => r.keys.latencies)];
  rows.push(['key → photon p50 / p95 (the event\'s time)', pp(ol), pp(tl), ratio(percentile(ol, 50), percentile(tl, 50))]);
  const [op, tp] = [ours.flatMap((r) => r.fromPress), theirs.flatMap((r) => r.keys.fromPress)];
  rows.push(["  from the driver's press", pp(op), pp(tp), ratio(percentile(op, 50), percentile(tp, 50))]);
  num('encoder CPU, cores (agent / Selkies)', mean(ours.map((r) => r.cpu)), mean(theirs.map((r) => r.cpu)), 2);
  num('encoder memory, MiB RSS', mean(ours.map((r) => r.rssMiB)), mean(theirs.map((r) => r.rssMiB)), 0);
  const missed = theirs.reduce((a, r) => a + r.keys.misses, 0);
  return [
    `| ${'metric'.padEnd(42)} | ${'ours (WebRTC)'.padEnd(17)} | ${'Selkies-GStreamer'.padEnd(17)} | ours / Selkies |`,
    `|${'-'.repeat(44)}|${'-'.repeat(19)}|${'-'.repeat(19)}|----------------|`,
    ...rows.map(([l, a, b, r]) => `| ${l.padEnd(42)} | ${a.padEnd(17)} | ${b.padEnd(17)} | ${r.padEnd(14)} |`),
    `Selkies-GStreamer: ${theirs.map((r) => r.detail).join('; ')}; ${missed} presses never showed`,
  ];
}
