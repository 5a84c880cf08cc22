/**
 * Where a WebRTC sample's freezes fell (bench:stream): the tab's snapshot taken every PROBE_MS through the sample, and
 * each step in which Chromium counted a freeze told with what the video met in it (NACKs sent, retransmissions and
 * packets lost, PLIs, keyframes). getStats alone says only how many froze and for how long in all.
 */

export const PROBE_MS = 500;

/** The counters of one reading of the tab's video that place a freeze (SNAPSHOT in page.ts reads them; null: no video). */
export interface Probe {
  t: number;
  rtc: null | { freezeCount: number; packetsLost: number; nack: number; rtx: number; pli: number; keyFrames: number };
}

/** Each step between two readings in which the freeze count rose: when (s after the first reading) and what came. */
export function freezeSteps(probes: Probe[]): string[] {
  const read = probes.flatMap((p) => (p.rtc ? [{ t: p.t, ...p.rtc }] : []));
  const [first, ...rest] = read;
  if (!first) return [];
  const out: string[] = [];
  let a = first;
  for (const z of rest) {
    const n = z.freezeCount - a.freezeCount;
    if (n > 0) {
      const [from, to] = [a.t, z.t].map((t) => ((t - first.t) / 1000).toFixed(1));
      out.push(
        `${n > 1 ? `${n} freezes` : 'a freeze'} at ${from}–${to} s: lost ${z.packetsLost - a.packetsLost}, NACK ${z.nack - a.nack}, ` +
          `RTX ${z.rtx - a.rtx}, PLI ${z.pli - a.pli}, keyframes ${z.keyFrames - a.keyFrames}`,
      );
    }
    a = z;
  }
  return out;
}
