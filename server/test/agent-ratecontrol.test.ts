import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's rate control (server/agent/ratecontrol.py), run in Debian's python3 as the agent runs it:
 * loss counted over windows of at least 200 packets (not each RTCP report's own fraction), queueing from the viewer's
 * TWCC feedback summed over a second, and the round trip only where there is no TWCC. bench:stream (LINK_KBPS, LOSS)
 * shows it on a real link.
 */
const AGENT = path.join(import.meta.dirname, '../agent');

function py(script: string): unknown {
  const out = execFileSync('/usr/bin/python3', ['-c', `import sys, json\nsys.path.insert(0, ${JSON.stringify(AGENT)})\nfrom ratecontrol import *\n${script}`], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

const twcc = (sentKbps: number, recvKbps: number, dod: number, packets = 160) =>
  `{'bitrate-sent': ${sentKbps * 1000}, 'bitrate-recv': ${recvKbps * 1000}, 'avg-delta-of-delta': ${dod}, 'packets-sent': ${packets}}`;

it('counts loss over windows of at least 200 packets from the running totals, and starts again when they go back', () => {
  expect(
    py(`m = LossMeter()
print(json.dumps([m.add(0, 0), m.add(150, 3), m.add(260, 5), m.add(300, 5), m.add(470, 9), m.add(10, 0), m.add(220, 2)]))`),
  ).toEqual([null, null, 5 / 260, null, 4 / 210, null, 2 / 210]);
});

it('holds the rate through random loss of a few percent, and backs off above 10%', () => {
  expect(
    py(`r = RateControl('auto')
held = [r.update(loss) for loss in (0.02, 0.035, None, 0.05, 0.09)]
kept = r.kbps
r.update(0.2)
print(json.dumps([held, kept, r.kbps, r.reason]))`),
  ).toEqual([[false, false, false, false, false], 1600, 1440, 'loss 20.0%']);
});

it('backs off below what arrived when TWCC shows a queue, holds two seconds, then probes up to the cap', () => {
  expect(
    py(`r = RateControl('auto')
r.twcc.add(${twcc(1500, 1000, 4000)})
r.update(None, 0.05)
after = [r.kbps, r.reason]
steps = []
for _ in range(3):
    r.twcc.add(${twcc(900, 900, -100)})
    steps.append(r.update(None, 0.05))
up = r.kbps
for _ in range(40):
    r.update(0.0, 0.05)
print(json.dumps([after, steps, up, r.kbps]))`),
  ).toEqual([[950, 'queueing: 1000 kbit/s arrived of 1500 sent'], [false, false, true], 1026, 1600]);
});

it('reads a slow window without growing gaps, or a slow frame, as no queue', () => {
  expect(
    py(`r = RateControl('auto')
r.twcc.add(${twcc(1500, 1000, -2000)})
slow = r.update(None, 0.05)
r.twcc.add(${twcc(1500, 1400, 9000)})
print(json.dumps([slow, r.update(None, 0.05), r.kbps]))`),
  ).toEqual([false, false, 1600]);
});

it('backs off on a long round trip only without TWCC: with it, an upload filling the way back is not our queue', () => {
  expect(
    py(`a, b = RateControl('auto'), RateControl('auto')
b.twcc.add(${twcc(1100, 1095, 300)})
print(json.dumps([a.update(None, 0.6), a.kbps, a.reason, b.update(None, 0.6), b.kbps]))`),
  ).toEqual([true, 1360, 'round trip 600 ms', false, 1600]);
});

it('never goes under its floor, and a quality choice sets the cap and the rate at once', () => {
  expect(
    py(`r = RateControl('auto')
for _ in range(30):
    r.update(0.5)
floor = r.kbps
r.set_quality('low')
low = [r.kbps, r.cap, r.reason]
for _ in range(5):
    r.update(0.0)
print(json.dumps([floor, low, r.kbps]))`),
  ).toEqual([250, [500, 500, 'quality low'], 500]);
});

it("sums a second's TWCC windows weighted by their packets, gives none from fewer than 30, and says once feedback came", () => {
  expect(
    py(`w = TwccWindows()
before = w.seen
w.add({'bitrate-sent': 1000000, 'bitrate-recv': 900000, 'avg-delta-of-delta': 3000, 'packets-sent': 10})
w.add({'bitrate-sent': 2000000, 'bitrate-recv': 2000000, 'avg-delta-of-delta': 0, 'packets-sent': 30})
w.add({'bitrate-sent': 5, 'packets-sent': 10})
one = w.take()
w.add({'bitrate-sent': 1000000, 'bitrate-recv': 900000, 'avg-delta-of-delta': 3000, 'packets-sent': 29})
print(json.dumps([before, w.seen, one, w.take(), w.take()]))`),
  ).toEqual([false, true, { 'bitrate-sent': 1750000, 'bitrate-recv': 1725000, 'avg-delta-of-delta': 750, 'packets-sent': 40 }, null, null]);
});
