/**
 * Streaming over a modest link: the same 1920×1080 desktop (an LXD desktop, as production runs them) running a
 * full-screen 3D scene (glxgears, Mesa software GL), seen in Chromium through WebRTC (the agent's H.264/VP8 video)
 * and through the VNC path (noVNC over the gateway WebSocket), RUNS runs each, alternating, over a link shaped like
 * the spec's minimum: 2 Mbit/s each way (tc tbf), 40 ms added round trip and 0.5% UDP loss (a user-space delay line;
 * this kernel has no netem).
 *
 * Topology (all made for the run and removed after it, also on error, SIGINT or the time limit; see stream/netns.ts;
 * the host's side is stream/outer.ts, the printed report stream/report.ts):
 *   [host: the server (npm start's way: scripts/run-server.sh, LXD provider) on 10.214.N.1, its desktops on LXD's bridge]
 *     ═ veth ═ [ns hd-bench-mid-ID: router] TUN 10.213.N.1 → delay line → veth ══ tbf 2 Mbit/s each way ══ veth
 *     ← delay line ← TUN 10.213.N.2 [ns hd-bench-cli-ID: this driver and Chromium; 127.0.0.1:8080 forwards to the server]
 * So the page, the API, the gateway WebSocket (TCP) and the agent's media (UDP between the desktop's address and
 * 10.213.N.2) all cross the shaped link; the delay lines print how many UDP and TCP packets they carried at the end.
 * The desktop image is hyperdesk-desktop-<recipe> (or IMAGE_ALIAS), built from this checkout's machine-image and agent
 * when its recipe changed; set IMAGE_ALIAS and LXD_IMAGE together to bench an image of your own.
 *
 * Measured per run: Start click (and the Connect tab's opening) → first frame → content (≥ 4 colours: windows
 * drawn); then, with the scene running, received fps, kbit/s and freeze time over SECONDS (WebRTC: getStats
 * framesDecoded, bytesReceived + headerBytesReceived, totalFreezesDuration; VNC: noVNC's canvas updates, WebSocket
 * bytes, freezes by the same rule Chromium uses for video); key → photon over SAMPLES key presses (a key makes a
 * program in the desktop flip a large colour patch; time from the keydown event to the first decoded frame /
 * painted canvas that shows it, and, as an upper bound on the page's own clock, from the driver's press to the page
 * being handed that frame; the goals are judged on the larger), and for WebRTC its budget by stage (see budget());
 * the encoder's CPU and memory (the agent's python3 for WebRTC, Xvnc for VNC: the X server too), also on the desktop
 * as it starts (before the scene) and on a still desktop (the demo closed: the frames the tab gets there too).
 *
 * With SELKIES_BUNDLE set (a Selkies-GStreamer bundle: docs/benchmarks.md), Selkies-GStreamer then runs as many times
 * on the WebRTC runs' machine, same scene and link, and a second table puts it beside ours (stream/selkies.ts).
 *
 *   sudo [SELKIES_BUNDLE=dir] npm run bench:stream -- [runs (3)] [seconds per sample (20)] [key presses per run (15)] [webrtc|vnc|both]
 * LOSS=0.03: UDP packets lost at that share each way instead of 0.5% (to look at loss repair; the goals are 0.5%'s).
 * UP_LOSS=0.05: the browser's packets to the server lost at that share instead (input over a lossy uplink: a lost
 * input packet cost a press 450-600 ms until input went unordered with its keys sent twice, server/agent/inorder.py).
 * BUSY=2: that many busy loops beside the scene, started as the user's programs are (a build taking the cores).
 */
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH, snap } from '../e2e/harness';
import { instanceOf } from '../server/src/modules/machines/providers/lxd/provider';
import { buyer, statusOf, type Buyer } from '../e2e/tests/connect-helpers';
import { findInInstance, usage, useBetween } from './stream/netns';
import { agentMeans, type AgentTiming, type StageInputs } from './stream/budget';
import { COLOURS, flipsSince, OBSERVE, showsColour, SNAPSHOT, timingSince } from './stream/page';
import { freezeSteps, PROBE_MS } from './stream/freezes';
import { keyToPhoton, withAgentSlowest, withoutSkewedClock } from './stream/presses';
import { fmtMs } from './stats';
import { selkiesRuns, selkiesTable } from './stream/selkies';
import { asUser, gearsFps, PATCH, sleep, startSceneFromShell, stopScene, until, waitIn, writeScene } from './stream/desktop';
import { outer } from './stream/outer';
import { report, runLine } from './stream/report';
import { BUSY, LINK, PORT, type InnerConfig, type Run, type Transport } from './stream/run';

const SELF = fileURLToPath(import.meta.url);
/** A spot on the desktop's own xterm (+48+64), where the scene is started from. */
const XTERM = { x: 300, y: 250 };

// ─── inner: the client namespace: forwarder, Chromium, the runs, the table ──────────────────────────────────────

function forwarder(srvIp: string): Promise<void> {
  const srv = createServer((sock) => {
    const up = connect(PORT, srvIp);
    sock.setNoDelay(true);
    up.setNoDelay(true);
    sock.pipe(up).pipe(sock);
    const end = () => {
      sock.destroy();
      up.destroy();
    };
    sock.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  return new Promise((resolve) => srv.listen(PORT, '127.0.0.1', () => resolve()));
}

/** Page coordinates of a desktop pixel on the tab's video or canvas (both scaled to fit, centred). */
async function pageXY(tab: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  const el = tab.locator('[data-testid="desktop-video"], [data-testid="desktop"] canvas').first();
  const box = (await el.boundingBox())!;
  const scale = Math.min(box.width / 1920, box.height / 1080);
  return { x: box.x + (box.width - 1920 * scale) / 2 + x * scale, y: box.y + (box.height - 1080 * scale) / 2 + y * scale };
}

type Snap = {
  t: number;
  flips: number;
  wsBytes: number;
  rtc: null | {
    framesDecoded: number;
    bytes: number;
    freezeCount: number;
    freezeS: number;
    packetsLost: number;
    packetsReceived: number;
    keyFrames: number;
    pli: number;
    nack: number;
    /** RTX packets received (the NACKs' answers). */
    rtx: number;
    width: number;
    height: number;
    decoder: string;
    codec: string;
    rttS: number | null;
    jitterBufferS: number;
    jitterBufferFrames: number;
    decodeS: number;
    feedback: string;
    path: string;
  };
};

/** Freezes by the rule Chromium applies to video (a gap > max(3 × mean frame interval, mean + 150 ms)). */
function freezes(times: number[], span: number): { count: number; ms: number } {
  if (times.length < 2) return { count: times.length ? 0 : 1, ms: span };
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const long = gaps.filter((g) => g > Math.max(3 * mean, mean + 150));
  return { count: long.length, ms: long.reduce((a, b) => a + b, 0) };
}

/** The ticket the dashboard fetched on the last Connect click (it hands it to the tab). */
let handed: Promise<{ ticket: string; at: number } | null> = Promise.resolve(null);

async function oneRun(cfg: InnerConfig, b: Buyer, transport: Transport): Promise<Run> {
  await b.page.goto(`${cfg.base}/dashboard`);
  const card = b.page.getByRole('article');
  await card.getByRole('button', { name: 'Start Machine' }).waitFor({ timeout: 60_000 });
  const t0 = performance.now();
  await card.getByRole('button', { name: 'Start Machine' }).click();
  await card.getByText('Online', { exact: true }).waitFor({ timeout: 600_000 });
  const online = performance.now() - t0;
  const dashboardTicket = b.page
    .waitForResponse((r) => r.url().endsWith('/v1/slot/connect/ticket') && r.request().method() === 'POST', { timeout: 30_000 })
    .then(async (r) => ({ ticket: ((await r.json()) as { ticket?: string }).ticket ?? '', at: performance.now() }))
    .catch(() => null);
  const [tab] = await Promise.all([b.context.waitForEvent('page'), card.getByRole('button', { name: 'Connect' }).click()]);
  const opened = performance.now();
  handed = dashboardTicket;
  try {
    return await measure(cfg, b, transport, tab, { t0, online, opened });
  } catch (e) {
    await snap(tab, `stream-failed-${transport}`).then((f) => console.error(`screenshot: ${f}`), () => {});
    throw e;
  }
}

async function measure(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page, at: { t0: number; online: number; opened: number }): Promise<Run> {
  const { t0, online, opened } = at;
  const card = b.page.getByRole('article');
  const frameInTab = await waitIn(tab, `${COLOURS} >= 1`, 'the first frame', 90_000);
  const frameSeen = performance.now();
  await waitIn(tab, `${COLOURS} >= 4`, 'the desktop content', 90_000);
  const content = performance.now();
  const shown = await transportShown(cfg, b, transport, tab);
  const { lookLag, milestones } = await tabMilestones(cfg, b, transport, tab, frameInTab, opened);
  const frame = frameSeen - lookLag;
  const quietCpu = await quietDesktopCpu(cfg, b, transport, tab);
  const still = await stillDesktop(cfg, b, transport, tab);
  await startScene(cfg, b, tab);
  const sample = await sampleStream(cfg, b, transport, tab, milestones);
  const gears = gearsFps(cfg.project, b.machineId);

  // Input → photon: alternate red and green on the patch.
  const pressedFrom = (await tab.evaluate('performance.now()')) as number;
  const { presses: keys, skewedMs } = withoutSkewedClock(await keyToPhoton(tab, cfg.samples), sample.stages?.rttMs ?? NaN);
  sample.stages?.pairs.push(...keys.pairs);
  // WebRTC: the agent's timing report covering the last press (VNC has no agent to report).
  if (transport === 'webrtc') await sleep(2100);
  const pressReports = (await tab.evaluate(timingSince(pressedFrom))) as { at: number; slowestMs?: number }[];

  const up = await uploadSample(tab, cfg.seconds);

  await tab.close();
  await card.getByRole('button', { name: 'Stop' }).click();
  await until(async () => (await statusOf(cfg.base, b.token, b.machineId)) === 'offline', 'the machine to stop', 120_000);
  return {
    transport,
    shown,
    online,
    frame: frame - t0,
    content: content - t0,
    tabFrame: frame - opened,
    tabContent: content - opened,
    fps: sample.fps,
    kbps: sample.kbps,
    freezePct: sample.freezePct,
    freezes: sample.freezeN,
    latencies: keys.latencies,
    fromPress: keys.fromPress,
    toReceive: keys.toReceive,
    handling: keys.handling,
    checking: keys.checking,
    pressToHandler: keys.pressToHandler,
    handlerToFrame: keys.handlerToFrame,
    presses: withAgentSlowest(keys.each, pressReports),
    misses: keys.misses,
    stale: keys.stale,
    skewedMs,
    cpu: sample.cpu,
    quietCpu,
    stillCpu: still.cpu,
    stillFps: still.fps,
    rssMiB: sample.rssMiB,
    gearsFps: gears,
    detail: sample.detail,
    protocol: sample.protocol,
    stages: sample.stages,
    uploadFps: up.fps,
    uploadKbps: up.kbps,
  };
}

/** The transport the tab says it uses once connected; a WebRTC run that fell back prints the agent's log. */
async function transportShown(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page): Promise<string> {
  await tab.locator('main[data-phase="connected"]').waitFor({ timeout: 30_000 });
  const shown = (await tab.getByTestId('transport').innerText()).trim();
  if (transport === 'webrtc' && shown !== 'WebRTC') {
    let agentLog: string;
    try {
      agentLog = asUser(cfg.project, b.machineId, 'tail -n 40 /tmp/agent.log');
    } catch (e) {
      agentLog = String(e);
    }
    console.error(`WebRTC fell back to ${shown}; the agent's log:\n${agentLog}`);
  }
  return shown;
}

/**
 * The tab's milestones as one line (its page, the requests, the socket, signaling, media, the first frame, and the
 * agent's own timeline), and how much later than the page's video-frame callback the look found the first frame.
 */
async function tabMilestones(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page, frameInTab: number, opened: number): Promise<{ lookLag: number; milestones: string }> {
  // Inside the tab, from its navigation start: gateway socket created / open, the agent's offer, media connected, frame.
  const marks = (await tab.evaluate('window.__hd.at')) as Record<string, number>;
  // The first frame is the one the page was called back for (the app asks for it with requestVideoFrameCallback;
  // page.ts notes when the call came). The first-frame look (measure) polls each animation frame for a <video> whose
  // readyState says it has a picture, which on a busy 2-core VM came 66-130 ms after that call: its lag comes off.
  // noVNC's canvas and Selkies-GStreamer's player make no such call, and keep the look's time.
  const called = marks['frame callback'];
  const lookLag = called !== undefined && called <= frameInTab ? frameInTab - called : 0;
  // The page before the socket: its document, and the requests the socket waited for (the session, the ticket).
  const page = (await tab.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const req = (p) => performance.getEntriesByType('resource').filter((r) => r.name.includes(p)).map((r) => [r.startTime, r.responseEnd]);
    const js = performance.getEntriesByType('resource').filter((r) => r.name.endsWith('.js'));
    const page = performance.getEntriesByName('hyperdesk:connect-page')[0];
    const answered = performance.getEntriesByName('hyperdesk:early-answer')[0];
    const first = performance.getEntriesByName('hyperdesk:early-script')[0];
    const scripts = js.length ? [[Math.min(...js.map((r) => r.startTime)), Math.max(...js.map((r) => r.responseEnd))]] : [];
    // What the page fetched over the link until its first frame (transferSize 0: from the cache), each by its file name.
    const all = [nav, ...performance.getEntriesByType('resource')].filter(Boolean);
    const kb = all.reduce((sum, r) => sum + (r.transferSize || 0), 0) / 1000;
    const fetched = all.filter((r) => r.transferSize > 0).map((r) => r.name.split(/[?#]/)[0].split('/').pop() + ' ' + Math.round(r.transferSize / 100) / 10 + ' kB').join(', ');
    return { kb, fetched, app: page ? page.startTime : -1, first: first ? first.startTime : -1, earlyAnswer: answered ? answered.startTime : -1, html: nav ? nav.responseEnd : -1, dom: nav ? nav.domContentLoadedEventEnd : -1, refresh: req('/v1/auth/refresh'), ticket: req('/v1/slot/connect/ticket'), scripts };
  })()`)) as { kb: number; fetched: string; app: number; first: number; earlyAnswer: number; html: number; dom: number; refresh: [number, number][]; ticket: [number, number][]; scripts: [number, number][] };
  const socketUrl = String(await tab.evaluate('window.__hd.socketUrl || ""'));
  const fromDashboard = await handed;
  const whose = fromDashboard && socketUrl.includes(`ticket=${fromDashboard.ticket}`) ? `the dashboard's (its answer ${fmtMs(fromDashboard.at - opened)} after the click)` : "the tab's own";
  const span = (xs: [number, number][]) => xs.map(([a, b]) => `${fmtMs(a)}–${fmtMs(b)}`).join(' + ') || 'none';
  const inTab = [
    `page ${fmtMs(page.html)} (DOM ${fmtMs(page.dom)}; ${page.kb.toFixed(1)} kB fetched: ${page.fetched || 'nothing'})`,
    `first script ${fmtMs(page.first)}`,
    `scripts ${span(page.scripts)}`,
    `the app's connection ${fmtMs(page.app)}`,
    page.earlyAnswer >= 0 ? `answered by the first script ${fmtMs(page.earlyAnswer)}` : 'answered by the page',
    `refresh ${span(page.refresh)}`,
    `own ticket ${span(page.ticket)}`,
    `socket with ${whose} ticket`,
    ...['ask', 'handed', 'socket', 'open', 'agent reached', 'offer came', 'offer', 'answer', 'ice', 'connected', 'track', 'frame received', 'frame callback'].filter((k) => marks[k] !== undefined).map((k) => `${k} ${fmtMs(marks[k]!)}`),
  ];
  let agentSide = '';
  if (transport === 'webrtc') {
    // The agent's own timeline of this viewer (its log): the DTLS certificate, the offer, the media path.
    try {
      const log = asUser(cfg.project, b.machineId, "grep -E 'DTLS certificate made|offer sent|connection (connecting|connected)' /tmp/agent.log | tail -n 4");
      agentSide = `; agent: ${log.trim().split('\n').map((l) => l.replace(/^.*?(DTLS|offer|connection)/, '$1')).join(', ')}`;
    } catch {
      /* a desktop whose log cannot be read: the tab's marks stand alone */
    }
  }
  const milestones = `tab: ${[...inTab, `first frame ${fmtMs(frameInTab - lookLag)}${lookLag ? ` (the look found it ${fmtMs(lookLag)} later)` : ''}`].join(', ')}${agentSide}`;

  return { lookLag, milestones };
}

/** The scene: started from the desktop's xterm, then the patch (on top, focused) waits for keys. */
async function startScene(cfg: InnerConfig, b: Buyer, tab: Page): Promise<void> {
  writeScene(cfg.project, b.machineId, BUSY);
  const term = await pageXY(tab, XTERM.x, XTERM.y);
  for (let attempt = 1; ; attempt++) {
    // A key typed right after the focusing click is sometimes lost: a fresh line first, and another try if need be.
    // Where the window manager put another window over the xterm, the next try starts the scene from a shell.
    if (attempt === 1) {
      await tab.mouse.click(term.x, term.y);
      await sleep(500);
      await tab.keyboard.press('Enter');
      await tab.keyboard.type('sh hd-scene.sh\n', { delay: 40 });
    } else {
      console.error(`the scene did not show after typing into the xterm: started from a shell (try ${attempt})`);
      startSceneFromShell(cfg.project, b.machineId);
    }
    try {
      await until(() => tab.evaluate(showsColour('b', PATCH.x, PATCH.y)) as Promise<boolean>, 'the colour patch', 30_000);
      break;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
  const patch = await pageXY(tab, PATCH.x, PATCH.y);
  await tab.mouse.click(patch.x, patch.y);
  await sleep(6000); // glxgears compiles its shaders and reports its first 5 s
}

/** The encoder's processes in the desktop: the agent's python3 for WebRTC, Xvnc for VNC (the X server too). */
function encoderPids(b: Buyer, transport: Transport): number[] {
  return findInInstance(instanceOf(b.machineId), (p) => (transport === 'webrtc' ? p.comm.startsWith('python3') && p.cmdline.includes('agent.py') : p.comm === 'Xvnc'));
}

/** The encoder's CPU (cores) and the frames a second the tab got over cfg.seconds, the desktop left as it is. */
async function encoderAtRest(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page): Promise<{ cpu: number; fps: number }> {
  const pids = encoderPids(b, transport);
  const cpu0 = pids.map(usage);
  const s0 = (await tab.evaluate(SNAPSHOT)) as Snap;
  await sleep(cfg.seconds * 1000);
  const s1 = (await tab.evaluate(SNAPSHOT)) as Snap;
  const dt = (s1.t - s0.t) / 1000;
  const frames = s0.rtc && s1.rtc ? s1.rtc.framesDecoded - s0.rtc.framesDecoded : s1.flips - s0.flips;
  return { cpu: useBetween(cpu0, pids.map(usage), dt).cores, fps: frames / dt };
}

/**
 * The encoder's CPU (cores) while the tab shows the desktop as it started: nothing typed, the demo's small window
 * moving a few times a second (it moves while someone watches), the rest unchanged.
 */
async function quietDesktopCpu(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page): Promise<number> {
  return (await encoderAtRest(cfg, b, transport, tab)).cpu;
}

/**
 * The encoder's CPU (cores) and the frames a second the tab got on a still desktop: the demo closed, nothing typed
 * (the agent encodes only frames that changed, framegate.py; VNC sends only changed rectangles).
 */
async function stillDesktop(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page): Promise<{ cpu: number; fps: number }> {
  stopScene(cfg.project, b.machineId);
  await sleep(1000);
  return encoderAtRest(cfg, b, transport, tab);
}

type StreamSample = { fps: number; kbps: number; freezePct: number; freezeN: number; detail: string; protocol: string; stages: StageInputs | null; cpu: number; rssMiB: number };

/** cfg.seconds of the stream: its rate, bits, freezes, the encoder's CPU and memory, and for WebRTC the stage inputs. */
async function sampleStream(cfg: InnerConfig, b: Buyer, transport: Transport, tab: Page, milestones: string): Promise<StreamSample> {
  const pids = encoderPids(b, transport);
  const cpu0 = pids.map(usage);
  const s0 = (await tab.evaluate(SNAPSHOT)) as Snap;
  const between = transport === 'webrtc' ? await snapshotsFor(tab, cfg.seconds * 1000) : (await sleep(cfg.seconds * 1000), []);
  const s1 = (await tab.evaluate(SNAPSHOT)) as Snap;
  const cpu1 = pids.map(usage);
  const dt = (s1.t - s0.t) / 1000;
  const { cores: cpu, rssMiB } = useBetween(cpu0, cpu1, dt);
  let fps: number, kbps: number, freezePct: number, freezeN: number, detail: string;
  let protocol = '';
  let stages: StageInputs | null = null;
  let detail0 = '';
  if (s0.rtc && s1.rtc) {
    const [a, z] = [s0.rtc, s1.rtc];
    fps = (z.framesDecoded - a.framesDecoded) / dt;
    kbps = ((z.bytes - a.bytes) * 8) / dt / 1000;
    freezePct = ((z.freezeS - a.freezeS) / dt) * 100;
    freezeN = z.freezeCount - a.freezeCount;
    const agent = agentMeans(((await tab.evaluate(timingSince(s0.t))) as (AgentTiming & { at: number })[]).filter((t) => t.at <= s1.t + 2500));
    stages = {
      rttMs: z.rttS === null ? NaN : z.rttS * 1000,
      jitterBufferMs: (1000 * (z.jitterBufferS - a.jitterBufferS)) / Math.max(1, z.jitterBufferFrames - a.jitterBufferFrames),
      decodeMs: (1000 * (z.decodeS - a.decodeS)) / Math.max(1, z.framesDecoded - a.framesDecoded),
      agent,
      pairs: [],
    };
    if (agent)
      detail0 = `agent: ${agent.fps.toFixed(1)} fps, capture ${agent.captureMs.toFixed(1)} ms, convert+queue ${agent.convertMs.toFixed(1)} ms, ` +
        `encode ${agent.encodeMs.toFixed(1)} ms (the slowest frame through all three ${agent.slowestMs.toFixed(0)} ms${agent.slowestParts ? `: ${agent.slowestParts.join(' + ')}` : ''}), frames ${(agent.frameBytes / 1024).toFixed(1)} KiB (max ${(agent.maxFrameBytes / 1024).toFixed(1)} KiB), keyframes ${agent.keyframes}; `;
    protocol = z.path.split(' ')[0] ?? '';
    const lost = z.packetsLost - a.packetsLost;
    const got = z.packetsReceived - a.packetsReceived;
    detail =
      `${detail0}${z.codec} ${z.width}×${z.height}${z.decoder ? ` (${z.decoder})` : ''}, loss ${((100 * lost) / Math.max(1, lost + got)).toFixed(2)}%, ` +
      `jitter buffer ${((1000 * (z.jitterBufferS - a.jitterBufferS)) / Math.max(1, z.jitterBufferFrames - a.jitterBufferFrames)).toFixed(0)} ms, ` +
      `decode ${((1000 * (z.decodeS - a.decodeS)) / Math.max(1, z.framesDecoded - a.framesDecoded)).toFixed(1)} ms a frame, ` +
      `keyframes ${z.keyFrames - a.keyFrames}, PLI ${z.pli - a.pli}, NACK ${z.nack - a.nack}, RTX ${z.rtx - a.rtx}, RTT ${z.rttS === null ? '?' : Math.round(z.rttS * 1000)} ms, ${z.path}, offer's rtcp-fb: ${z.feedback}; ` +
      freezeSteps([s0, ...between, s1]).map((f) => `${f}; `).join('') + milestones;
  } else {
    const times = (await tab.evaluate(flipsSince(s0.t))) as number[];
    const inWindow = times.filter((t) => t <= s1.t);
    fps = inWindow.length / dt;
    kbps = ((s1.wsBytes - s0.wsBytes) * 8) / dt / 1000;
    const f = freezes(inWindow, s1.t - s0.t);
    freezePct = (f.ms / (s1.t - s0.t)) * 100;
    freezeN = f.count;
    detail = `noVNC canvas updates over the gateway WebSocket; ${milestones}`;
  }
  return { fps, kbps, freezePct, freezeN, detail, protocol, stages, cpu, rssMiB };
}

/** The tab's snapshots every PROBE_MS for `ms` (freezes.ts: where in the sample a freeze fell). */
async function snapshotsFor(tab: Page, ms: number): Promise<Snap[]> {
  const snaps: Snap[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await sleep(Math.min(PROBE_MS, end - performance.now()));
    snaps.push((await tab.evaluate(SNAPSHOT)) as Snap);
  }
  return snaps;
}

/**
 * An upload at full speed beside the picture (issue 21: the video keeps ≥ 25 fps): a file through the Files panel,
 * over the same shaped link as everything else, big enough to outlast the sample; the picture's frames are counted
 * while it goes (WebRTC: decoded frames; VNC: canvas updates), and the upload's rate is its size over its time.
 */
async function uploadSample(tab: Page, seconds: number): Promise<{ fps: number; kbps: number }> {
  const bytes = Math.round(((LINK.kbps * 1000) / 8) * seconds * 1.5);
  await tab.getByRole('button', { name: 'Files', exact: true }).click();
  const t0 = performance.now();
  // A name of its own per run: the same name again is saved as "bench-upload (1).bin".
  const name = `bench-upload-${Date.now()}.bin`;
  await tab.getByTestId('files-picker').setInputFiles({ name, mimeType: 'application/octet-stream', buffer: Buffer.alloc(bytes, 7) });
  await sleep(1000);
  const s0 = (await tab.evaluate(SNAPSHOT)) as Snap;
  await sleep(seconds * 1000);
  const s1 = (await tab.evaluate(SNAPSHOT)) as Snap;
  const dt = (s1.t - s0.t) / 1000;
  const fps = s0.rtc && s1.rtc ? (s1.rtc.framesDecoded - s0.rtc.framesDecoded) / dt : ((await tab.evaluate(flipsSince(s0.t))) as number[]).filter((t) => t <= s1.t).length / dt;
  await tab.getByText(`Saved as ~/Uploads/${name}`).waitFor({ timeout: 600_000 });
  return { fps, kbps: (bytes * 8) / ((performance.now() - t0) / 1000) / 1000 };
}

async function innerMain(cfg: InnerConfig) {
  await forwarder(cfg.srvIp);
  await until(
    async () => {
      try {
        // Each try has its own timeout: one that hangs (a connection made while the link came up) must not be the last.
        return (await fetch(`${cfg.base}/readyz`, { signal: AbortSignal.timeout(2000) })).ok;
      } catch {
        return false;
      }
    },
    'the server',
    900_000,
  );
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Host candidates as addresses (not mDNS names): the agent's ICE pairs with the veth address directly.
    args: [...CHROMIUM_ARGS, '--disable-features=WebRtcHideLocalIpsWithMdns'],
  });
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await browser.close().catch(() => {});
  };
  process.on('SIGTERM', () => void close().finally(() => process.exit(143)));
  try {
    const buyers: Partial<Record<Transport, Buyer>> = {};
    for (const t of cfg.transports) {
      buyers[t] = await buyer(browser, cfg.base, `Stream Bench ${t === 'vnc' ? 'VNC' : 'WebRTC'}`, t);
      await buyers[t].context.addInitScript({ content: OBSERVE });
    }
    const runs: Run[] = [];
    for (let i = 0; i < cfg.runs; i++) {
      for (const t of cfg.transports) {
        const r = await oneRun(cfg, buyers[t]!, t);
        runs.push(r);
        console.log(runLine(i, r));
      }
    }
    report(runs, cfg, browser.version());
    if (cfg.selkies && buyers.webrtc) {
      const theirs = await selkiesRuns({ browser, base: cfg.base, project: cfg.project, buyer: buyers.webrtc, bundle: cfg.selkies, runs: cfg.runs, seconds: cfg.seconds, samples: cfg.samples });
      console.log(`\nSelkies-GStreamer beside ours: the same desktop, scene and link, ${theirs.length} runs (x264, 30 fps, 1,600 kbit/s asked):\n`);
      for (const line of selkiesTable(runs.filter((r) => r.transport === 'webrtc'), theirs)) console.log(line);
    }
  } finally {
    await close();
  }
}

if (process.argv[2] === '--inner') {
  innerMain(JSON.parse(process.argv[3]!) as InnerConfig).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  outer(SELF, process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
