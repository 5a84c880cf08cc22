import { expect } from 'vitest';

export interface TypeUntil<T> {
  /** Focuses the desktop's terminal and types an idempotent line; a later attempt (2, 3) may first clear what is left. */
  type(attempt: number): Promise<void>;
  /** Reads what the line writes (a file in the home folder, say). */
  read(): T | Promise<T>;
  /** Whether what was read is the line's result. */
  done(value: T): boolean;
  /** How long one attempt waits for it (10 s unless told). */
  timeout?: number;
  /** On the last failure: a screenshot, what the desktop shows; its text goes into the error. */
  failed?(last: T): Promise<string | void> | string | void;
}

/**
 * Types a line into a desktop until what it writes is there, at most three times, and answers what was read. Keys
 * sent right after a focusing click are sometimes lost on a loaded host: a window that maps late (the file manager)
 * takes them, or the terminal has no focus yet. The line must be idempotent.
 */
export async function typeUntil<T>(t: TypeUntil<T>): Promise<T> {
  let last!: T;
  for (let attempt = 1; ; attempt++) {
    await t.type(attempt);
    try {
      await expect
        .poll(async () => t.done((last = await t.read())), { timeout: t.timeout ?? 10_000 })
        .toBe(true);
      return last;
    } catch (err) {
      if (attempt === 3) {
        const why = await t.failed?.(last);
        throw new Error(`typed 3 times, still read ${JSON.stringify(last)}${why ? `: ${why}` : ''}`, { cause: err });
      }
    }
  }
}
