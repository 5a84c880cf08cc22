/**
 * Where a WebRTC sample's freezes fell (bench:stream): the tab's counters read every PROBE_MS through the sample, and
 * each step in which Chromium counted a freeze told with what the video met in it (NACKs sent, retransmissions and
 * packets lost, PLIs, keyframes). getStats alone says only how many froze and for how long in all.
 */

export const PROBE_MS = 500;

/** One reading of the tab's video counters (FREEZE_PROBE in page.ts). */
export interface Probe {
  t: number;
  freezes: number;
  nack: number;
  rtx: number;
  lost: number;
  pli: number;
  keyFrames: number;
}

/** Each step between two readings in which the freeze count rose: when (s after the first reading) and what came. */
export function freezeSteps(probes: Probe[]): string[] {
  const [first, ...rest] = probes;
  if (!first) return [];
  const out: string[] = [];
  let a = first;
  for (const z of rest) {
    const n = z.freezes - a.freezes;
    if (n > 0) {
      const [from, to] = [a.t, z.t].map((t) => ((t - first.t) / 1000).toFixed(1));
      out.push(
        `${n > 1 ? `${n} freezes` : 'a freeze'} at ${from}–${to} s: lost ${z.lost - a.lost}, NACK ${z.nack - a.nack}, ` +
          `RTX ${z.rtx - a.rtx}, PLI ${z.pli - a.pli}, keyframes ${z.keyFrames - a.keyFrames}`,
      );
    }
    a = z;
  }
  return out;
}
