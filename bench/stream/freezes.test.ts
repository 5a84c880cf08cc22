import { describe, expect, it } from 'vitest';
import { freezeSteps, type Probe } from './freezes';

type Counters = NonNullable<Probe['rtc']>;
const probe = (t: number, freezeCount: number, more: Partial<Counters> = {}): Probe => ({
  t,
  rtc: { freezeCount, nack: 0, rtx: 0, packetsLost: 0, pli: 0, keyFrames: 0, ...more },
});

describe('freezeSteps', () => {
  it('tells nothing when the count never rose', () => {
    expect(freezeSteps([probe(1000, 2), probe(1500, 2), probe(2000, 2)])).toEqual([]);
  });

  it('places each rise in its step, with what the video met in that step only', () => {
    const probes = [
      probe(1000, 0),
      probe(1500, 0, { nack: 1, rtx: 1, packetsLost: 1 }),
      probe(2000, 1, { nack: 4, rtx: 2, packetsLost: 3, pli: 1, keyFrames: 1 }),
      probe(2500, 1, { nack: 4, rtx: 2, packetsLost: 3, pli: 1, keyFrames: 1 }),
      probe(3000, 3, { nack: 5, rtx: 3, packetsLost: 4, pli: 1, keyFrames: 1 }),
    ];
    expect(freezeSteps(probes)).toEqual([
      'a freeze at 0.5–1.0 s: lost 2, NACK 3, RTX 1, PLI 1, keyframes 1',
      '2 freezes at 1.5–2.0 s: lost 1, NACK 1, RTX 1, PLI 0, keyframes 0',
    ]);
  });
});
