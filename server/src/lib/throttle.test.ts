import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { throttle } from './throttle';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

it('runs the first call at once and folds a burst into one run at the end of the gap', () => {
  const fn = vi.fn();
  const t = throttle(fn, 250);
  t();
  expect(fn).toHaveBeenCalledTimes(1);
  for (let i = 0; i < 40; i++) t();
  expect(fn).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(250);
  expect(fn).toHaveBeenCalledTimes(2);
  vi.advanceTimersByTime(1000);
  expect(fn).toHaveBeenCalledTimes(2);
  t();
  expect(fn).toHaveBeenCalledTimes(3);
});

it('keeps to one run a gap under a steady stream of calls, and cancel drops the pending one', () => {
  const fn = vi.fn();
  const t = throttle(fn, 100);
  for (let ms = 0; ms < 1000; ms += 10) {
    t();
    vi.advanceTimersByTime(10);
  }
  expect(fn.mock.calls.length).toBeGreaterThanOrEqual(10);
  expect(fn.mock.calls.length).toBeLessThanOrEqual(11);
  const n = fn.mock.calls.length;
  t();
  t.cancel();
  vi.advanceTimersByTime(500);
  expect(fn).toHaveBeenCalledTimes(n);
});
