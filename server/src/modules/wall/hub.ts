import type { FastifyBaseLogger } from 'fastify';
import { startCapture, THUMB, WATCH, type Capture, type Exec } from './capture';

export type FrameKind = 'thumb' | 'watch';
type Listener = (jpeg: Buffer) => void;

interface Feed {
  kind: FrameKind;
  machineId: string;
  listeners: Set<Listener>;
  capture: Capture | null;
  last: Buffer | null;
  failures: number;
  restart: NodeJS.Timeout | null;
  linger: NodeJS.Timeout | null;
}

/** A feed nobody watches any more keeps running this long (a wall that reloads does not restart 40 captures). */
const LINGER_MS = 10_000;
const RESTART_MS = [1_000, 2_000, 5_000, 10_000];

/**
 * The captures of this server: one per (machine, kind) while at least one wall stream here wants it, shared by all
 * of them, stopped shortly after the last one leaves. A capture that ends (a screen resize, the desktop restarting)
 * is started again with a growing pause. The same picture twice in a row is not sent again.
 */
export function createCaptureHub(exec: Exec | null, log: FastifyBaseLogger) {
  const feeds = new Map<string, Feed>();

  function run(feed: Feed): void {
    if (!exec) return;
    feed.capture = startCapture(
      exec,
      feed.machineId,
      feed.kind === 'thumb' ? THUMB : WATCH,
      (jpeg) => {
        feed.failures = 0;
        if (feed.last?.equals(jpeg)) return;
        feed.last = jpeg;
        for (const fn of feed.listeners) fn(jpeg);
      },
      (err) => {
        feed.capture = null;
        if (!feeds.has(key(feed.kind, feed.machineId))) return;
        const pause = RESTART_MS[Math.min(feed.failures, RESTART_MS.length - 1)]!;
        feed.failures++;
        if (err) log.warn({ machineId: feed.machineId, kind: feed.kind, err: err.message }, 'wall capture ended');
        feed.restart = setTimeout(() => {
          feed.restart = null;
          if (feeds.has(key(feed.kind, feed.machineId))) run(feed);
        }, pause);
        feed.restart.unref();
      },
    );
  }

  function close(feed: Feed): void {
    feeds.delete(key(feed.kind, feed.machineId));
    if (feed.restart) clearTimeout(feed.restart);
    if (feed.linger) clearTimeout(feed.linger);
    feed.capture?.stop();
  }

  return {
    /** Pictures of the machine's desktop to fn (the latest at once, if any) until the answered function is called. */
    subscribe(machineId: string, kind: FrameKind, fn: Listener): () => void {
      const k = key(kind, machineId);
      let feed = feeds.get(k);
      if (!feed) {
        feed = { kind, machineId, listeners: new Set(), capture: null, last: null, failures: 0, restart: null, linger: null };
        feeds.set(k, feed);
        run(feed);
      }
      if (feed.linger) {
        clearTimeout(feed.linger);
        feed.linger = null;
      }
      feed.listeners.add(fn);
      if (feed.last) fn(feed.last);
      const f = feed;
      return () => {
        f.listeners.delete(fn);
        if (f.listeners.size || f.linger || feeds.get(k) !== f) return;
        f.linger = setTimeout(() => close(f), LINGER_MS);
        f.linger.unref();
      };
    },
    /** Captures running now (tests, metrics). */
    running: () => [...feeds.values()].filter((f) => f.capture).length,
    available: () => exec !== null,
    closeAll(): void {
      for (const f of [...feeds.values()]) close(f);
    },
  };
}

const key = (kind: FrameKind, machineId: string) => `${kind}:${machineId}`;

export type CaptureHub = ReturnType<typeof createCaptureHub>;
