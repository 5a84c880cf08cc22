import type { FastifyBaseLogger } from 'fastify';
import { pressAgain, type WallInputEvent } from '@hyperdesk/contract';
import type { Endpoint } from '../machines/providers/types';
import { RfbInput } from './rfb-input';

/** An input connection unused this long is closed (the next event opens another). */
const IDLE_MS = 60_000;

interface Held {
  rfb: RfbInput;
  idle: NodeJS.Timeout;
  keys: Map<number, number>; // keysym -> keysym: what is held down (pressAgain's map)
  buttons: number;
  last: { x: number; y: number };
}

/**
 * The take-overs' input connections on this server, one per machine. Callers have checked that the instructor's
 * take-over of the machine is live. Keys and buttons still down when a take-over ends are released, so the
 * student never inherits a stuck Shift or a held mouse button.
 */
export function createInputs(endpointOf: (machineId: string) => Promise<Endpoint | null>, log: FastifyBaseLogger) {
  const held = new Map<string, Held>();

  function drop(machineId: string): void {
    const h = held.get(machineId);
    if (!h) return;
    held.delete(machineId);
    clearTimeout(h.idle);
    h.rfb.close();
  }

  async function connection(machineId: string): Promise<Held | null> {
    const h = held.get(machineId);
    if (h && !h.rfb.isClosed) return h;
    if (h) drop(machineId);
    const endpoint = await endpointOf(machineId);
    if (!endpoint) return null;
    const fresh: Held = { rfb: new RfbInput(endpoint.open()), idle: setTimeout(() => drop(machineId), IDLE_MS), keys: new Map(), buttons: 0, last: { x: 0.5, y: 0.5 } };
    fresh.idle.unref();
    held.set(machineId, fresh);
    return fresh;
  }

  /**
   * The events as the desktop takes them, noting what they hold down: a repeated press of a held key becomes a
   * release and a press, a held modifier's repeat is dropped (X has no auto-repeat of its own: contract/src/keys.ts).
   */
  function applied(h: Held, events: WallInputEvent[]): WallInputEvent[] {
    return events.flatMap((e): WallInputEvent[] => {
      if (e.t !== 'k') {
        h.buttons = e.buttons;
        h.last = { x: e.x, y: e.y };
        return [e];
      }
      if (e.down) return pressAgain(h.keys, e.keysym, e.keysym).map((k) => ({ t: 'k', ...k }));
      h.keys.delete(e.keysym);
      return [e];
    });
  }

  return {
    /** Sends the events to the machine's desktop; false when it cannot be reached (offline, VNC restarting). */
    async send(machineId: string, events: WallInputEvent[]): Promise<boolean> {
      for (let attempt = 0; attempt < 2; attempt++) {
        const h = await connection(machineId);
        if (!h) return false;
        h.idle.refresh();
        try {
          await h.rfb.send(applied(h, events));
          return true;
        } catch (err) {
          // Xvnc closes a connection that cannot follow a screen resize (this one asks for no picture, so it
          // does not say it can): one more try on a new connection.
          log.info({ machineId, err: (err as Error).message }, 'take-over input connection lost');
          drop(machineId);
        }
      }
      return false;
    },
    /** The take-over ended: what is still pressed is released and the connection closed. */
    async release(machineId: string): Promise<void> {
      const h = held.get(machineId);
      if (!h) return;
      const ups: WallInputEvent[] = [...h.keys.keys()].map((keysym) => ({ t: 'k', down: false, keysym }));
      if (h.buttons) ups.push({ t: 'p', x: h.last.x, y: h.last.y, buttons: 0 });
      if (ups.length) await h.rfb.send(ups).catch(() => undefined);
      drop(machineId);
    },
    closeAll(): void {
      for (const id of [...held.keys()]) drop(id);
    },
  };
}
