import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerDue, earlyAnswer, settledOrAfter } from '../src/early/gate';

/** Whether `p` has settled, after the microtasks queued so far have run. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe("the app's start on a Connect tab (early/gate.ts)", () => {
  afterEach(() => {
    vi.useRealTimers();
    delete (globalThis as Record<string, unknown>).__hyperdeskAnswerDue;
  });

  it('starts at once where no early answer is on its way', async () => {
    vi.useFakeTimers();
    expect(await settled(settledOrAfter(undefined, 250))).toBe(true);
    expect(await settled(earlyAnswer(250))).toBe(true);
  });

  it('waits for the early answer, and starts as soon as it is sent', async () => {
    vi.useFakeTimers();
    let send = () => {};
    answerDue(new Promise<void>((resolve) => (send = resolve)));
    const start = earlyAnswer(250);
    await vi.advanceTimersByTimeAsync(100);
    expect(await settled(start)).toBe(false);
    send();
    expect(await settled(start)).toBe(true);
  });

  it('starts after the cap when the answer does not come', async () => {
    vi.useFakeTimers();
    answerDue(new Promise<void>(() => {}));
    const start = earlyAnswer(250);
    await vi.advanceTimersByTimeAsync(249);
    expect(await settled(start)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(start)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
