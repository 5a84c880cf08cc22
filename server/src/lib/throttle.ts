/**
 * `fn` at most once every `gapMs`: the first call runs at once, calls within the gap after it are folded into one
 * run at the gap's end. For pushes where only "something changed" matters (a burst of 40 machines coming online is
 * one or two re-fetches, not 40). `cancel` drops a pending run.
 */
export function throttle(fn: () => void, gapMs: number): { (): void; cancel(): void } {
  let timer: NodeJS.Timeout | null = null;
  let pending = false;
  const open = () => {
    timer = setTimeout(() => {
      timer = null;
      if (!pending) return;
      pending = false;
      fn();
      open();
    }, gapMs);
  };
  const call = () => {
    if (timer) {
      pending = true;
      return;
    }
    fn();
    open();
  };
  call.cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    pending = false;
  };
  return call;
}
