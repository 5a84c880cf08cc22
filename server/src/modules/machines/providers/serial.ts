/**
 * One operation per key at a time, in call order: a provider's start and stop of the same machine never
 * interleave. A failed operation does not stop the next one.
 */
export function perKeySerial(): <T>(key: string, fn: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return (key, fn) => {
    const next = (tails.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = next.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => tails.get(key) === tail && tails.delete(key));
    return next;
  };
}
