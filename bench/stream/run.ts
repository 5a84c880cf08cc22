/**
 * What bench:stream's two halves share: the link's shape, the driver's configuration (handed from the host's side to
 * the client namespace's as JSON) and one run's readings.
 */
import type { StageInputs } from './budget';
import type { PressParts } from './presses';

export type Transport = 'webrtc' | 'vnc';

/**
 * The spec's minimum: 2 Mbit/s each way (tc tbf, 200 ms queue), 40 ms added round trip, 0.5% UDP loss (LOSS: another
 * share each way, to look at loss repair; UP_LOSS: from the browser only; LINK_KBPS: a narrower or wider link, to
 * look at the rate control). The goals are judged on the spec's link.
 */
export const SPEC_LINK = { kbps: 2000, udpLoss: 0.005 };
export const LINK = {
  kbps: process.env.LINK_KBPS ? Number(process.env.LINK_KBPS) : SPEC_LINK.kbps,
  rttMs: 40,
  udpLoss: process.env.LOSS ? Number(process.env.LOSS) : SPEC_LINK.udpLoss,
  queueMs: 200,
  upLoss: process.env.UP_LOSS ? Number(process.env.UP_LOSS) : undefined,
};
export const LOSS = `${LINK.udpLoss * 100}% UDP loss${LINK.upLoss === undefined ? ' each way' : ` to the browser, ${LINK.upLoss * 100}% from it`}`;
/**
 * BUSY=2: that many busy loops started with the scene from the desktop's terminal, as a user's build taking the
 * desktop's cores would be (the stream's path keeps its CPU: machine-image/desktop-session.sh). 0 by default.
 */
export const BUSY = process.env.BUSY ? Math.max(0, Math.floor(Number(process.env.BUSY)) || 0) : 0;
/** The port the server listens on (host side) and its forwarder on the client namespace's loopback. */
export const PORT = 8080;

export interface InnerConfig {
  base: string;
  /** Where the server listens (the host's end of the link). */
  srvIp: string;
  /** The deployment's LXD project (its desktops' instances). */
  project: string;
  runs: number;
  transports: Transport[];
  seconds: number;
  samples: number;
  /** SELKIES_BUNDLE: Selkies-GStreamer to run beside ours on the WebRTC runs' machine (stream/selkies.ts), or null. */
  selkies: string | null;
}

export interface Run {
  transport: Transport;
  /** What the toolbar said once connected (a WebRTC run that fell back to VNC shows 'VNC'). */
  shown: string;
  online: number;
  frame: number;
  content: number;
  /** From the Connect click (the tab opening). */
  tabFrame: number;
  tabContent: number;
  fps: number;
  kbps: number;
  freezePct: number;
  freezes: number;
  latencies: number[];
  fromPress: number[];
  /** WebRTC: keydown → the last packet of the frame showing it arrived (the rest is jitter buffer, decode, paint). */
  toReceive: number[];
  /** keydown → the tab's handler running it (the tab's main thread's share). */
  handling: number[];
  /** The bench's look at a frame for the key's colour, ms. */
  checking: number[];
  /** The tab's clock: the driver's press → the keydown handler; the handler → the frame handed to the page. */
  pressToHandler: number[];
  handlerToFrame: number[];
  /** Each press's times together (the slowest ones are printed with their stages). */
  presses: PressParts[];
  misses: number;
  /** Presses skipped because the patch already showed their colour. */
  stale: number;
  /** Key → frame received p50 when it read below the round trip: the run's readings on those timestamps left out. */
  skewedMs: number | null;
  cpu: number;
  /** The encoder's CPU (cores) on the desktop as it started, before the scene (quietDesktopCpu). */
  quietCpu: number;
  /** The encoder's CPU (cores) and the frames a second the tab got on a still desktop (stillDesktop). */
  stillCpu: number;
  stillFps: number;
  rssMiB: number;
  gearsFps: number;
  detail: string;
  /** WebRTC: the media's protocol on the path the tab uses ('udp', 'tcp'; '' for VNC). */
  protocol: string;
  /** WebRTC: what the key → photon budget by stage is made of. */
  stages: StageInputs | null;
  /** While a file goes up through the Files panel at the link's full speed: the picture's fps and the upload's rate. */
  uploadFps: number;
  uploadKbps: number;
}
