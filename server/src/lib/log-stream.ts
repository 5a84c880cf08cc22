import type { Writable } from 'node:stream';

/** Log output a stuck reader may hold back before lines are dropped (about 6,000 request log lines). */
export const LOG_QUEUE_LIMIT = 4 * 1024 * 1024;

export interface LogStream {
  /** pino's destination interface: one serialized line. Never blocks; drops the line when `out` is stuck. */
  write(line: string): boolean;
  /** Lines dropped so far (reader stuck, or gone). */
  readonly dropped: number;
}

/**
 * A pino destination that never blocks the event loop. pino's default destination writes synchronously to fd 1 and,
 * when a pipe is full (a log shipper that stopped reading), retries in a sleep loop on the main thread, also at
 * exit, so SIGTERM never finished (issue 14). Here lines go to `out` (process.stdout: on a pipe or socket a
 * non-blocking stream that queues in memory while the reader is slow; on a file or terminal a synchronous write
 * that always finishes). While more than `limit` bytes wait, lines are dropped and counted, and one line reports
 * the count once the reader catches up. After a write error (EPIPE: the reader closed the pipe) every line is dropped.
 */
export function createLogStream(out: Writable, limit = LOG_QUEUE_LIMIT): LogStream {
  let dropped = 0;
  let unreported = 0;
  let broken = false;
  out.on('error', () => {
    broken = true;
  });
  out.on('drain', () => {
    if (!unreported || broken) return;
    const note = { level: 40, time: Date.now(), pid: process.pid, msg: `${unreported} log lines dropped: the log reader was not keeping up` };
    unreported = 0;
    out.write(`${JSON.stringify(note)}\n`);
  });
  return {
    write(line) {
      if (broken || out.destroyed || out.writableLength > limit) {
        dropped++;
        if (!broken) unreported++;
        return true;
      }
      out.write(line);
      return true;
    },
    get dropped() {
      return dropped;
    },
  };
}

let stdoutStream: LogStream | undefined;
/** The process's one stdout log stream (shared, so listeners are added to process.stdout once). */
export function stdoutLogStream(): LogStream {
  stdoutStream ??= createLogStream(process.stdout);
  return stdoutStream;
}
