import type { Page } from 'playwright-core';
import { percentile } from '../stats';
import { PATCH, sleep } from './desktop';
import { awaitColour, LOSS_REPAIRS, showsColour } from './page';

/** Key → photon over a run's presses, in ms (see awaitColour for what each time is). */
export interface Presses {
  /** The key event's own time → the first frame showing its colour. */
  latencies: number[];
  /** The driver's press (the tab's clock, read just before it) → the page handed that frame: an upper bound. */
  fromPress: number[];
  /** WebRTC: the key's time → that frame's last packet arrived. */
  toReceive: number[];
  /** The key's time → the page's keydown handler running it (the tab's main thread). */
  handling: number[];
  /**
   * Both on the tab's own clock (performance.now()): the driver's press → the keydown handler running (DevTools and
   * the browser's input path, not the product), and the handler → the page handed the frame showing the key (what the
   * product adds once the page has the key). The frame's and the event's timestamps are left out of these two: runs
   * read key → frame received below the link's round trip from them.
   */
  pressToHandler: number[];
  handlerToFrame: number[];
  /** The bench's own look at one frame for the key's colour, ms (mean per press): what the observer costs the tab. */
  checking: number[];
  /** Both of a press's photon and received times, for the budget by stage. */
  pairs: { photon: number; received: number }[];
  /** Each press whose colour showed, its times together (ms; NaN where a time was missing), for the slowest ones' stages. */
  each: PressParts[];
  /** Presses whose colour never showed within 5 s. */
  misses: number;
  /** Presses skipped: the patch showed the wanted colour before the key was pressed. */
  stale: number;
}

/** The tab's NACKs sent and retransmissions received so far (LOSS_REPAIRS). */
type Repairs = { nacks: number; rtx: number };

/** One press's times: the two key → photon readings and what they are made of (see Presses). */
export interface PressParts {
  fromPress: number;
  latency: number;
  pressToHandler: number;
  handlerToFrame: number;
  toReceive: number;
  /** NACKs the tab sent from just before the press until its frame was shown (NaN: not WebRTC). */
  nacks: number;
  /** Retransmitted packets the tab received meanwhile (NaN: not WebRTC). */
  rtx: number;
  /** The tab's clock just before the driver pressed (performance.now() ms). */
  at: number;
  /**
   * WebRTC: the slowest frame's way through the agent (capture → encoded) in its timing reports that cover the press
   * until 2 s after its frame showed (NaN: none came): a stall in the agent, or none, beside the press's own time.
   */
  agentSlowest: number;
}

/**
 * Presses g and r in turn (the focused colour patch turns green and red) and times each until the picture in the
 * tab shows it, whatever draws that picture (the Connect tab's video or canvas, another streamer's video).
 */
export async function keyToPhoton(tab: Page, samples: number): Promise<Presses> {
  const out: Presses = { latencies: [], fromPress: [], toReceive: [], handling: [], pressToHandler: [], handlerToFrame: [], checking: [], pairs: [], each: [], misses: 0, stale: 0 };
  for (let i = 0; i < samples; i++) {
    const want = i % 2 ? 'r' : 'g';
    // A patch that already shows the colour (the last press did not change it) would time a frame the key did not make.
    if ((await tab.evaluate(showsColour(want, PATCH.x, PATCH.y))) as boolean) {
      out.stale++;
      continue;
    }
    const repairsBefore = (await tab.evaluate(LOSS_REPAIRS)) as Repairs | null;
    const seen = tab.evaluate(awaitColour(want, PATCH.x, PATCH.y, want)) as Promise<{ shown: number; at: number; key: number; handled: number; received: number; checkMs?: number }>;
    await sleep(50);
    // The driver's own clock of the press and the page's of the frame, both performance.now() in the tab: an upper
    // bound whatever the frame's and the event's own timestamps say (runs read key → photon below the link's round
    // trip from them: their time bases are not the page's).
    const issued = (await tab.evaluate('performance.now()')) as number;
    await tab.keyboard.press(want);
    const r = await seen;
    const repairsAfter = repairsBefore === null ? null : ((await tab.evaluate(LOSS_REPAIRS)) as Repairs | null);
    if (r.shown >= 0 && r.key >= 0) out.latencies.push(r.shown - r.key);
    else out.misses++;
    if (r.shown >= 0) out.fromPress.push(r.at - issued);
    if (r.received > 0 && r.key >= 0) out.toReceive.push(r.received - r.key);
    if (r.handled >= 0 && r.key >= 0) out.handling.push(r.handled - r.key);
    if (r.handled >= 0) out.pressToHandler.push(r.handled - issued);
    if (r.shown >= 0 && r.handled >= 0) out.handlerToFrame.push(r.at - r.handled);
    if (r.checkMs !== undefined && r.checkMs >= 0) out.checking.push(r.checkMs);
    if (r.shown >= 0 && r.received > 0 && r.key >= 0) out.pairs.push({ photon: r.shown - r.key, received: r.received - r.key });
    if (r.shown >= 0) {
      const known = (ok: boolean, ms: number) => (ok ? ms : NaN);
      out.each.push({
        fromPress: r.at - issued,
        latency: known(r.key >= 0, r.shown - r.key),
        pressToHandler: known(r.handled >= 0, r.handled - issued),
        handlerToFrame: known(r.handled >= 0, r.at - r.handled),
        toReceive: known(r.received > 0 && r.key >= 0, r.received - r.key),
        nacks: repairsBefore === null || repairsAfter === null ? NaN : repairsAfter.nacks - repairsBefore.nacks,
        rtx: repairsBefore === null || repairsAfter === null ? NaN : repairsAfter.rtx - repairsBefore.rtx,
        at: issued,
        agentSlowest: NaN,
      });
    }
    await sleep(250 + Math.random() * 350);
  }
  return out;
}

/**
 * A run's presses without the readings made on the key event's and the frame's own timestamps, when those are not on
 * the page's clock: a frame cannot show a key before the key has gone to the desktop and the frame come back (a round
 * trip), yet some runs (mostly a browser's first) read key → frame received p50 below it, even below 0. What those
 * runs read on the page's own clock (the driver's press → photon, press → handler → frame) stays. `skewedMs`: the
 * impossible p50, when the run's were left out.
 */
export function withoutSkewedClock(p: Presses, rttMs: number): { presses: Presses; skewedMs: number | null } {
  const received = percentile(p.toReceive, 50);
  if (!Number.isFinite(rttMs) || !(received < rttMs)) return { presses: p, skewedMs: null };
  const presses: Presses = {
    ...p,
    latencies: [],
    toReceive: [],
    handling: [],
    pairs: [],
    each: p.each.map((e) => ({ ...e, latency: NaN, toReceive: NaN })),
  };
  return { presses, skewedMs: received };
}

/**
 * Sets each press's agentSlowest from the agent's timing reports (each received by the tab at `at`, covering the 2 s
 * before it): the largest slowestMs of those received from the press until 2.1 s after its frame showed.
 */
export function withAgentSlowest(each: PressParts[], reports: { at: number; slowestMs?: number }[]): PressParts[] {
  return each.map((x) => {
    const covering = reports.filter((r) => r.at >= x.at && r.at <= x.at + x.fromPress + 2100 && typeof r.slowestMs === 'number');
    return { ...x, agentSlowest: covering.length ? Math.max(...covering.map((r) => r.slowestMs!)) : NaN };
  });
}

/** The larger of a press's two readings that is there (the event's time, the driver's press); NaN when neither is. */
export function largerOf(xs: number[]): number {
  const known = xs.filter((x) => !Number.isNaN(x));
  return known.length ? Math.max(...known) : NaN;
}
