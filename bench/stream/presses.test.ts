import { describe, expect, it } from 'vitest';
import { largerOf, withAgentSlowest, withoutSkewedClock, type Presses } from './presses';

const run = (toReceive: number[]): Presses => ({
  latencies: toReceive.map((t) => t + 3),
  fromPress: toReceive.map((t) => t + 40),
  toReceive,
  handling: toReceive.map(() => 1),
  pressToHandler: toReceive.map(() => 5),
  handlerToFrame: toReceive.map((t) => t + 30),
  checking: toReceive.map(() => 2),
  pairs: toReceive.map((t) => ({ photon: t + 3, received: t })),
  each: toReceive.map((t) => ({ fromPress: t + 40, latency: t + 3, pressToHandler: 5, handlerToFrame: t + 30, toReceive: t, nacks: 0, rtx: 0, at: 1000 * t, agentSlowest: NaN })),
  misses: 0,
  stale: 0,
});

describe("a run's key → photon readings on the event's and the frame's own timestamps", () => {
  it('are kept when key → frame received is at least the round trip', () => {
    const p = run([45, 60, 70, 90]);
    expect(withoutSkewedClock(p, 42)).toEqual({ presses: p, skewedMs: null });
    expect(withoutSkewedClock(p, NaN).skewedMs).toBeNull(); // no round trip read: nothing to judge by
  });

  it('are left out when its p50 is below the round trip (the page-clock readings stay)', () => {
    const p = run([-20, -12, 5, 30]);
    const { presses, skewedMs } = withoutSkewedClock(p, 42);
    expect(skewedMs).toBe(-12);
    expect(presses.latencies).toEqual([]);
    expect(presses.toReceive).toEqual([]);
    expect(presses.pairs).toEqual([]);
    expect(presses.handling).toEqual([]);
    expect(presses.fromPress).toEqual(p.fromPress);
    expect(presses.handlerToFrame).toEqual(p.handlerToFrame);
    expect(presses.each.every((e) => Number.isNaN(e.latency) && Number.isNaN(e.toReceive) && e.fromPress > 0 && e.nacks === 0)).toBe(true);
  });
});

describe("a press's slowest frame through the agent", () => {
  it('is the largest in the reports from the press until 2.1 s after its frame showed', () => {
    const press = { ...run([50]).each[0]!, at: 10_000, fromPress: 100 };
    const reports = [
      { at: 9_990, slowestMs: 300 }, // before the press: another press's window
      { at: 10_500, slowestMs: 12 },
      { at: 12_150, slowestMs: 140 },
      { at: 12_300, slowestMs: 900 }, // later than 2.1 s after the frame
    ];
    expect(withAgentSlowest([press], reports)[0]!.agentSlowest).toBe(140);
  });

  it('is unknown without a report (VNC, another streamer, an agent that does not report it)', () => {
    const press = run([50]).each[0]!;
    expect(withAgentSlowest([press], [])[0]!.agentSlowest).toBeNaN();
    expect(withAgentSlowest([press], [{ at: press.at + 10 }])[0]!.agentSlowest).toBeNaN();
  });
});

describe('the key → photon goal reading', () => {
  it('takes the larger reading, the one that is there when the other was left out, and none when neither is', () => {
    expect(largerOf([84, 97])).toBe(97);
    expect(largerOf([NaN, 97])).toBe(97);
    expect(largerOf([NaN, NaN])).toBeNaN();
  });
});
