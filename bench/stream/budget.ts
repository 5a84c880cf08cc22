/**
 * bench:stream's key → photon budget by stage (WebRTC): where the milliseconds between a key press in the tab and
 * the frame showing its effect go. Measured: key → photon and key → the frame's last packet received (per key
 * press, requestVideoFrameCallback's receiveTime); the agent's own timing of each frame (capture, conversion and
 * queue, encoding, frame size: server/agent/timing.py, sent on the input channel every 2 s); the browser's getStats
 * (round trip, jitter buffer delay, decode time). Derived: the wait for the next capture (half a frame interval),
 * sending a frame at the link's rate, and two remainders (named as such).
 */
import { percentile } from '../stats';

/** What one WebRTC run measured for the budget. */
export interface StageInputs {
  rttMs: number;
  jitterBufferMs: number;
  decodeMs: number;
  /** The agent's means over the sampling window. */
  agent: { fps: number; captureMs: number; convertMs: number; encodeMs: number; slowestMs: number; slowestParts: [number, number, number] | null; frameBytes: number; maxFrameBytes: number; keyframes: number } | null;
  /** Per key press: key → photon, and key → the frame's last packet received. */
  pairs: { photon: number; received: number }[];
}

export interface AgentTiming {
  frames: number;
  fps: number;
  captureMs: number;
  convertMs: number;
  encodeMs: number;
  /** The slowest frame's way through capture, conversion and encoding (an agent without it: absent). */
  slowestMs?: number;
  /** That frame's capture, conversion and queue, and encoding, ms. */
  slowestParts?: [number, number, number];
  frameBytes: number;
  maxFrameBytes: number;
  keyframes: number;
}

/** Frame-weighted means of the agent's reports. */
export function agentMeans(reports: AgentTiming[]): StageInputs['agent'] {
  const frames = reports.reduce((a, r) => a + r.frames, 0);
  if (!frames) return null;
  const w = (f: (r: AgentTiming) => number) => reports.reduce((a, r) => a + f(r) * r.frames, 0) / frames;
  return {
    fps: reports.reduce((a, r) => a + r.fps, 0) / reports.length,
    captureMs: w((r) => r.captureMs),
    convertMs: w((r) => r.convertMs),
    encodeMs: w((r) => r.encodeMs),
    slowestMs: Math.max(...reports.map((r) => r.slowestMs ?? NaN)),
    slowestParts: [...reports].sort((a, b) => (b.slowestMs ?? 0) - (a.slowestMs ?? 0))[0]?.slowestParts ?? null,
    frameBytes: w((r) => r.frameBytes),
    maxFrameBytes: Math.max(...reports.map((r) => r.maxFrameBytes)),
    keyframes: reports.reduce((a, r) => a + r.keyframes, 0),
  };
}

/** The budget rows (stage, ms, how it is known) from all WebRTC runs; empty without the agent's timing. */
export function budget(runs: StageInputs[], linkKbps: number): [string, number, string][] {
  const withAgent = runs.filter((r) => r.agent);
  if (!withAgent.length) return [];
  const mean = (f: (r: StageInputs) => number) => withAgent.reduce((a, r) => a + f(r), 0) / withAgent.length;
  const pairs = withAgent.flatMap((r) => r.pairs);
  const photon = percentile(pairs.map((p) => p.photon), 50);
  const received = percentile(pairs.map((p) => p.received), 50);
  const afterReceive = percentile(pairs.map((p) => p.photon - p.received), 50);
  const fps = mean((r) => r.agent!.fps);
  // A run whose tab had no selected candidate pair in its last getStats (seen once, on a loaded VM) has no RTT.
  const withRtt = withAgent.filter((r) => Number.isFinite(r.rttMs));
  const network = withRtt.reduce((a, r) => a + r.rttMs, 0) / withRtt.length;
  const captureWait = 1000 / Math.max(1, fps) / 2;
  const capture = mean((r) => r.agent!.captureMs);
  const convert = mean((r) => r.agent!.convertMs);
  const encode = mean((r) => r.agent!.encodeMs);
  const send = (mean((r) => r.agent!.frameBytes) * 8) / linkKbps;
  const desktop = received - network - captureWait - capture - convert - encode - send;
  const decode = mean((r) => r.decodeMs);
  const jitter = mean((r) => r.jitterBufferMs);
  const render = afterReceive - decode - Math.max(0, jitter - send);
  return [
    ['network (round trip: key up, frame down)', network, 'getStats candidate-pair RTT'],
    // Below 0 when the rows it is taken from overstate their share: the RTT includes the agent's own delay in
    // answering connectivity checks, and each of the agent's stages is a mean where key → received is a median.
    [desktop < 0 ? 'desktop (remainder: the other rows overstate)' : 'desktop (key → app → X; remainder)', desktop, 'key → received − the rows below it'],
    [`capture wait (½ frame at ${fps.toFixed(0)} fps)`, captureWait, 'agent frame rate'],
    ['capture (X grab)', capture, 'agent: ximagesrc stamp → out'],
    ['convert + queue (to I420)', convert, 'agent: capture out → encoder in'],
    ['encode', encode, 'agent: encoder in → out'],
    ['send (mean frame at the link rate)', send, 'agent frame size ÷ link'],
    ['jitter buffer (after the last packet)', Math.max(0, jitter - send), 'getStats jitterBufferDelay − send'],
    ['decode', decode, 'getStats totalDecodeTime'],
    ['render (remainder)', render, 'photon − received − the two above'],
    ['= key → photon p50', photon, `key → received p50 ${received.toFixed(0)} ms`],
  ];
}
