import type { Writable } from 'node:stream';

/** Log output a stuck reader may hold back before lines are dropped (about 6,000 request log lines). */
export const LOG_QUEUE_LIMIT = 4 * 1024 * 1024;

export interface LogStream {
  /** pino's destination interface: one serialized line. Never blocks; drops the line when `out` is stuck. */
  write(line: string): boolean;
  /** Writes the lines gathered so far now (they otherwise go out once the current event-loop turn ends). */
  flush(): void;
  /** Lines dropped so far (reader stuck, or gone). */
  readonly dropped: number;
}

/** Gathered lines are written at once when they reach this size, without waiting for the end of the turn. */
const BATCH_BYTES = 64 * 1024;

/**
 * A pino destination that never blocks the event loop. pino's default destination writes synchronously to fd 1 and,
 * when a pipe is full (a log shipper that stopped reading), retries in a sleep loop on the main thread, also at
 * exit, so SIGTERM never finished (issue 14). Here lines go to `out` (process.stdout: on a pipe or socket a
 * non-blocking stream that queues in memory while the reader is slow; on a file or terminal a synchronous write
 * that always finishes). While more than `limit` bytes wait, lines are dropped and counted, and one line reports
 * the count once the reader catches up. After a write error (EPIPE: the reader closed the pipe) every line is dropped.
 *
 * Lines are gathered and written once per event-loop turn (or per BATCH_BYTES): every write to a pipe is a system
 * call that wakes the reader, and a server answering thousands of requests a second writes two lines for each, so
 * writing them one by one cost the server more than the rest of a request (issue 23). Nothing waits longer than the
 * turn that logged it, and the stdout stream writes what it gathered when the process exits.
 */
export function createLogStream(out: Writable, limit = LOG_QUEUE_LIMIT): LogStream {
  let dropped = 0;
  let unreported = 0;
  let broken = false;
  let batch = '';
  let scheduled = false;
  out.on('error', () => {
    broken = true;
  });
  out.on('drain', () => {
    if (!unreported || broken) return;
    const note = { level: 40, time: Date.now(), pid: process.pid, msg: `${unreported} log lines dropped: the log reader was not keeping up` };
    unreported = 0;
    out.write(`${JSON.stringify(note)}\n`);
  });
  const flush = () => {
    scheduled = false;
    if (!batch) return;
    const lines = batch;
    batch = '';
    if (broken || out.destroyed) return;
    out.write(lines);
  };
  return {
    write(line) {
      // Near the limit the gathered lines join `out`'s queue first, so the limit counts all that waits, as before.
      if (out.writableLength + batch.length > limit) flush();
      if (broken || out.destroyed || out.writableLength > limit) {
        dropped++;
        if (!broken) unreported++;
        return true;
      }
      batch += line;
      if (batch.length >= BATCH_BYTES) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      return true;
    },
    flush,
    get dropped() {
      return dropped;
    },
  };
}

let stdoutStream: LogStream | undefined;
/** The process's one stdout log stream (shared, so listeners are added to process.stdout once). */
export function stdoutLogStream(): LogStream {
  if (!stdoutStream) {
    const stream = createLogStream(process.stdout);
    process.on('exit', () => stream.flush()); // process.exit() after a last line: it still goes out
    stdoutStream = stream;
  }
  return stdoutStream;
}
