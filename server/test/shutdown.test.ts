import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startServer, type RunningServer } from '../../e2e/harness';
import { until } from './machines-desktops';

/**
 * Issue 14.3: SIGTERM ends the real server (the compiled bundle, run as `npm start` runs it) within 10 s under load,
 * also when nobody reads its stdout pipe and when the reader closed it. Logging at `info` writes two lines per
 * request, so the load below writes megabytes into a pipe that holds a few hundred kilobytes.
 */
describe('shutdown always finishes', () => {
  let srv: RunningServer | undefined;

  afterEach(async () => {
    await srv?.stop('SIGKILL');
    await srv?.close();
    srv = undefined;
  });

  it('exits within 10 s of SIGTERM under load while nobody reads its stdout', async () => {
    srv = await startServer({ LOG_LEVEL: 'info' }, { readStdout: false });
    const stdout = srv.proc.stdout!;
    const traffic = load(srv.base);
    // Our end of the pipe buffers up to its high-water mark and then stops reading: from there on the server's
    // writes fill the kernel's buffer and then find the pipe full.
    await until('the unread pipe to fill', () => stdout.readableLength >= stdout.readableHighWaterMark || traffic.failed > 0, 60_000);
    const mark = traffic.answered;
    await until('1,500 answers more while stdout is stalled', () => traffic.answered >= mark + 1500 || traffic.failed > 0, 60_000);
    expect(traffic.failed, 'requests left unanswered while stdout was stalled').toBe(0);

    const exit = await terminate(srv.proc);
    await traffic.stop();
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(10_000);
  }, 240_000);

  it('exits within 10 s of SIGTERM under load after the reader closed its stdout', async () => {
    srv = await startServer({ LOG_LEVEL: 'info' }, { readStdout: false });
    const proc = srv.proc;
    proc.stdout!.destroy();
    const traffic = load(srv.base);
    await until('500 answers after stdout was closed', () => traffic.answered >= 500 || traffic.failed > 0 || proc.exitCode !== null, 60_000);
    expect(traffic.failed, 'requests left unanswered after stdout was closed').toBe(0);
    expect(proc.exitCode, 'the server ended on its own').toBeNull();

    const exit = await terminate(proc);
    await traffic.stop();
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(10_000);
  }, 240_000);
});

/** Requests in `workers` parallel loops (each answer logged twice by the server) until stop(); failures counted. */
function load(base: string, workers = 8) {
  const paths = ['/healthz', '/readyz', '/v1/user/wallet/balance'];
  let answered = 0;
  let failed = 0;
  let stopped = false;
  const loop = async (w: number) => {
    for (let i = w; !stopped; i++) {
      try {
        const res = await fetch(base + paths[i % paths.length], { signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        answered++;
      } catch {
        if (!stopped) failed++;
      }
    }
  };
  const loops = Array.from({ length: workers }, (_, w) => loop(w));
  return {
    get answered() {
      return answered;
    },
    get failed() {
      return failed;
    },
    /** Call once the server is gone: requests failing from here on are expected. */
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** SIGTERM, then the exit as seen from here; SIGKILL after 20 s so a hung server fails the test instead of hanging it. */
async function terminate(proc: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const sent = performance.now();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal, ms: Math.round(performance.now() - sent) })),
  );
  proc.kill('SIGTERM');
  const cap = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  try {
    return await exited;
  } finally {
    clearTimeout(cap);
  }
}
