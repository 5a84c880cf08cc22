/**
 * The app's start on a Connect tab waits for the first script's answer to the agent's offer (early/dial.ts), at most
 * a cap: answering takes three steps on the tab's main thread (the offer, the answer, setting it), and the app's own
 * start (its modules, its first render) held each of them there. Measured with bench:stream (2026-12-03, a fast
 * EPYC, three pairs of benches alternated): the offer answered 4-16 ms after it came instead of 5-69 ms, the Connect
 * tab's first frame p50 377, 428 and 432 ms instead of 518, 478 and 457 ms, p95 506-523 ms instead of 543-905 ms.
 * No imports: the app's entry takes this without the first script's code.
 */

/** Kept on the window: the first script is an inline copy of its own (vite.config.ts earlyScript). */
const KEY = '__hyperdeskAnswerDue';
const slot = globalThis as unknown as { [KEY]?: Promise<void> };

/** The first script has an answer on its way: `due` settles once it is sent, or once none will be. */
export function answerDue(due: Promise<void>): void {
  slot[KEY] = due;
}

/** `due`, or `capMs` later, whichever comes first; at once when nothing is due. */
export function settledOrAfter(due: Promise<void> | undefined, capMs: number): Promise<void> {
  if (!due) return Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, capMs)));
  return Promise.race([due, cap]).finally(() => clearTimeout(timer));
}

/** When the app may start: once this tab's early answer is sent, or `capMs` later; at once where none is on its way. */
export function earlyAnswer(capMs: number): Promise<void> {
  return settledOrAfter(slot[KEY], capMs);
}
