import type { LxdClient } from './client';
import { ExecStream } from './exec-stream';

/** How often a watch asks the desktop's VNC server for its greeting, inside the instance. */
export const WATCH_EVERY_S = 4;
/** A watch whose last "up" is younger than this vouches for the desktop. */
const FRESH_MS = 2.5 * WATCH_EVERY_S * 1000;
/** A watch silent this long (no line at all) is replaced. */
const STUCK_MS = 6 * WATCH_EVERY_S * 1000;

/** The loop a watch runs: one line a round, "up" when the VNC server greeted ("RFB 003.00x"), else "down". */
export const watchScript = (socket: string) =>
  `while :; do if timeout 3 socat -T1 -u UNIX-CONNECT:${socket} - 2>/dev/null | head -c 12 | grep -q '^RFB 003'; then echo up; else echo down; fi; sleep ${WATCH_EVERY_S}; done`;

interface Watch {
  stream: ExecStream;
  upAt: number;
  lineAt: number;
}

export interface DesktopWatches {
  /** True when the instance's watch saw its VNC server greet within the last few rounds. */
  vouches(instance: string): boolean;
  /** Starts a watch on a running instance whose desktop just answered (no-op while a live one runs). */
  ensure(instance: string): void;
  /** Ends an instance's watch (it stopped; its exec ends with it anyway). */
  drop(instance: string): void;
}

/**
 * The reconciler looks at every online desktop every few seconds; an exec per look (a process forked in the
 * instance, four websockets, LXD's bookkeeping) cost a third of a core for 40 idle desktops. A watch is one
 * long-lived exec per running desktop that checks the VNC server itself and prints a line a round, so a look reads
 * a timestamp. It runs as the desktop's user: the tenant can end it or print lines into it, which only makes the
 * next look fall back to the exec probe (a watch that stopped) or keep charging their own running machine.
 */
export function createDesktopWatches(lxd: LxdClient, socket: string): DesktopWatches {
  const watches = new Map<string, Watch>();
  const now = () => Date.now();

  function start(instance: string): void {
    const w: Watch = { stream: new ExecStream(lxd, instance, ['sh', '-c', watchScript(socket)]), upAt: 0, lineAt: now() };
    watches.set(instance, w);
    let buf = '';
    w.stream.setEncoding('latin1');
    w.stream.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        w.lineAt = now();
        w.upAt = line === 'up' ? w.lineAt : 0;
      }
      if (buf.length > 64) buf = ''; // not our lines
    });
    const gone = () => {
      if (watches.get(instance) === w) watches.delete(instance);
    };
    w.stream.on('error', gone);
    w.stream.on('close', gone);
    w.stream.on('end', () => w.stream.destroy());
  }

  return {
    vouches(instance) {
      const w = watches.get(instance);
      return !!w && now() - w.upAt < FRESH_MS;
    },
    ensure(instance) {
      const w = watches.get(instance);
      if (w && now() - w.lineAt < STUCK_MS) return;
      w?.stream.destroy();
      start(instance);
    },
    drop(instance) {
      watches.get(instance)?.stream.destroy();
      watches.delete(instance);
    },
  };
}
