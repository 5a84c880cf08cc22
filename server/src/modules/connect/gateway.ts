import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { FastifyBaseLogger } from 'fastify';
import type { Endpoint } from '../machines/providers/types';
import type { RawData, WebSocket } from 'ws';
import { GATEWAY_CLOSE, GatewayClientMessage, type GatewayMode, type GatewayServerMessage } from '@hyperdesk/contract';
import { connectSessions } from '../../db/schema/index';
import { canConnect, type MachineRow } from './access';
import { runsWantedHome } from '../machines/reconciler-steps';
import { bytesRelayed, openSessions, sessionsClosed } from './metrics';
import type { ConnectDeps } from './deps';
import { consumeTicket } from './tickets';
import { releaseSeatSoon } from '../courses/seats';
import { openAgent } from './signaling';
import { iceServersFor } from './turn';
import { createDesktopRelay } from './desktop-relay';
import { ACCESS_LOST, createSessionAccess, type Stopped } from './session-access';
import { forgetSession, reserveSession, touchSessions } from './sessions';

export { MAX_SESSIONS_PER_USER } from './sessions';

/** Largest WebSocket message a client may send (the RFB client messages are tiny; clipboard text is the big one). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
const MAX_CONTROL_BYTES = 256;
const AGENT_WAIT_MS = 3_000;
const AGENT_POLL_MS = 100;
const MAX_SIGNAL_BYTES = 40 * 1024; // webrtc mode: an SDP answer is the biggest text frame
const CHECK_MS = 5_000; // access and machine state re-checked this often (also on every event for the user)
const KEEPALIVE_MS = 30_000; // a client that misses a ping for this long is gone
const INPUT_FLUSH_MS = 30_000; // last input written to the database at most this often (the idle job flushes too)

interface LiveSession {
  id: string;
  machineId: string;
  lastInputAt: Date | null;
  flushedInputAt: Date | null;
  /** The last write of lastInputAt (each waits for the one before; never rejects): settled when the database has flushedInputAt. */
  inputWritten: Promise<unknown>;
  warnedStopAt: string | null;
  /** The class end this session was told of (input does not undo it: the class ends all the same). */
  toldClassEnd: string | null;
  send(msg: GatewayServerMessage): void;
  end(code: number, why: string, msg?: Stopped): void;
}

/**
 * Client input in the RFB stream: KeyEvent (4), PointerEvent (5) and ClientCutText (6) messages. noVNC sends each
 * client message in its own WebSocket frame, and also sends FramebufferUpdateRequests (3) after every update, so
 * "bytes from the client" alone would never look idle; only these count.
 */
function isInput(frame: Buffer): boolean {
  const t = frame[0];
  return (t === 4 && frame.length >= 8) || (t === 5 && frame.length >= 6) || (t === 6 && frame.length >= 8);
}

const toBuffer = (d: RawData): Buffer => (Buffer.isBuffer(d) ? d : Array.isArray(d) ? Buffer.concat(d) : Buffer.from(d));

type StartMessage = Extract<GatewayClientMessage, { type: 'start' }>;

const StartQuery = z.object({ codecs: z.string().max(40), quality: z.string().max(20).optional() });

/** The stream's start as the tab puts it in the socket's URL (`&codecs=h264,vp8&quality=auto`), or null. */
export function startInUrl(query: unknown): StartMessage | null {
  const q = StartQuery.safeParse(query);
  if (!q.success) return null;
  const msg = GatewayClientMessage.safeParse({ type: 'start', codecs: q.data.codecs.split(','), quality: q.data.quality });
  return msg.success && msg.data.type === 'start' ? msg.data : null;
}

export function createGateway(deps: ConnectDeps) {
  const live = new Map<string, LiveSession>();
  const { principalOf, stoppedMessage, endingOf, announceSeat } = createSessionAccess(deps);

  /** Serves one gateway WebSocket. Only the ticket is read from the request: never a host, port or machine. */
  function accept(ws: WebSocket, ticket: unknown, reqLog: FastifyBaseLogger, mode: GatewayMode = 'vnc', start: StartMessage | null = null): void {
    let log = reqLog;
    let ended = false;
    let counted = false;
    let reserved = false;
    let sessionRow = false;
    let userId: string | null = null;
    let agent: ReturnType<typeof openAgent> | null = null;
    /** webrtc mode: the tab's start (in the socket's URL, or sent before the agent is reached), kept until it is. */
    let startAhead: StartMessage | null = mode === 'webrtc' ? start : null;
    let alive = true;
    let checking: Promise<void> | null = null;
    /** An event came while a check was running: one more check after it (its reads may predate the change). */
    let recheck = false;
    let timer: NodeJS.Timeout | null = null;
    let sinceKeepalive = 0;
    let unsubscribe: (() => void) | null = null;
    let toClient = 0;
    let fromClient = 0;
    const openedAt = deps.clock.now();
    const startedMs = performance.now();

    const session: LiveSession = {
      id: randomUUID(),
      machineId: '',
      lastInputAt: null,
      flushedInputAt: null,
      inputWritten: Promise.resolve(),
      warnedStopAt: null,
      toldClassEnd: null,
      send(msg) {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
      },
      end,
    };

    const relay = createDesktopRelay(ws, {
      toClient(bytes) {
        toClient += bytes;
        bytesRelayed.inc({ direction: 'to_client' }, bytes);
      },
      overflow: () => end(1009, 'too-much-early-input'),
      closed() {
        if (ended) return;
        // The desktop went away: tell a stop (no reconnect) from a hiccup (the tab reconnects).
        void check().finally(() => end(GATEWAY_CLOSE.desktopUnreachable, 'desktop-closed'));
      },
      warn: (obj, msg) => log.warn(obj, msg),
    });

    function end(code: number, why: string, msg?: Stopped): void {
      if (ended) return;
      ended = true;
      if (timer) clearInterval(timer);
      unsubscribe?.();
      relay.destroy();
      agent?.close();
      if (msg) session.send(msg);
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, why.slice(0, 100));
      live.delete(session.id);
      if (counted) openSessions.dec();
      sessionsClosed.inc({ reason: why });
      log.info({ why, code, toClient, fromClient, seconds: Math.round((performance.now() - startedMs) / 1000) }, 'desktop session closed');
      if (sessionRow) {
        deps.db
          .update(connectSessions)
          .set({ closedAt: deps.clock.now(), closeReason: why, bytesToClient: toClient, bytesFromClient: fromClient, lastInputAt: session.lastInputAt })
          .where(eq(connectSessions.id, session.id))
          .catch((err) => log.error({ err }, 'could not record the end of a desktop session'));
      } else if (reserved) {
        forgetSession(deps.db, session.id).catch((err) => log.error({ err }, 'could not give back a session place'));
      }
      // Classrooms: the student's seat is free again after a short grace (a reconnect keeps it).
      if (userId && session.machineId) {
        releaseSeatSoon(deps.db, session.machineId, userId).catch((err) => log.warn({ err }, 'could not release a seat'));
      }
    }

    function markInput(): void {
      const now = deps.clock.now();
      // After a 'Still there?' warning the answer is written at once: the idle job of any server may stop next.
      const warned = session.warnedStopAt !== null;
      session.lastInputAt = now;
      session.warnedStopAt = null;
      if (warned || !session.flushedInputAt || now.getTime() - session.flushedInputAt.getTime() >= INPUT_FLUSH_MS) {
        flushSession(session).catch((err) => log.warn({ err }, 'could not record the last input'));
      }
    }

    function toDesktop(frame: Buffer): void {
      fromClient += frame.length;
      bytesRelayed.inc({ direction: 'to_machine' }, frame.length);
      if (isInput(frame)) markInput();
      relay.write(frame);
    }

    function onControl(text: Buffer): void {
      if (text.length > (mode === 'webrtc' ? MAX_SIGNAL_BYTES : MAX_CONTROL_BYTES)) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.toString('utf8'));
      } catch {
        return;
      }
      const msg = GatewayClientMessage.safeParse(parsed);
      if (!msg.success) return;
      const m = msg.data;
      if (m.type === 'ping') session.send({ type: 'pong', t: m.t });
      else if (m.type === 'start' || m.type === 'answer' || m.type === 'ice') {
        fromClient += text.length;
        if (agent) agent.send(m);
        else if (m.type === 'start' && mode === 'webrtc') startAhead = m;
      } else markInput();
    }

    ws.on('message', (data, isBinary) => {
      if (ended) return;
      const frame = toBuffer(data);
      if (isBinary && mode === 'webrtc') return end(1003, 'binary-in-webrtc-mode');
      if (isBinary) toDesktop(frame);
      else onControl(frame);
    });
    ws.on('close', () => end(1000, 'client-closed'));
    ws.on('pong', () => {
      alive = true;
    });

    /** Ends the session when the user lost access or the machine is no longer running (one check at a time). */
    function check(): Promise<void> {
      if (ended || !userId) return Promise.resolve();
      const uid = userId;
      if (checking) {
        recheck = true;
        return checking;
      }
      checking = (async () => {
        try {
          const ending = await endingOf(uid, session.machineId, openedAt);
          if (ending) end(ending.code, ending.why, ending.msg);
        } catch (err) {
          log.warn({ err }, 'desktop session check failed');
        } finally {
          checking = null;
          if (recheck) {
            recheck = false;
            void check();
          }
        }
      })();
      return checking;
    }

    function tick(): void {
      void check();
      sinceKeepalive += CHECK_MS;
      if (sinceKeepalive < KEEPALIVE_MS) return;
      sinceKeepalive = 0;
      if (!alive) {
        ws.terminate();
        return end(1001, 'client-unresponsive');
      }
      alive = false;
      ws.ping();
    }

    /** The agent starts a moment after the desktop answers VNC: a tab that connects right away waits for it. */
    async function agentSoon(machineId: string): Promise<Endpoint | null> {
      for (let waited = 0; ; waited += AGENT_POLL_MS) {
        const agent = await deps.machines.agentOf(machineId);
        if (agent || ended || waited >= AGENT_WAIT_MS) return agent;
        await new Promise((r) => setTimeout(r, AGENT_POLL_MS));
      }
    }

    function startAgent(address: Endpoint, uid: string): void {
      const iceServers = iceServersFor(deps.turn ?? { urls: [] }, uid, deps.clock.now().getTime());
      agent = openAgent(
        address,
        iceServers,
        log,
        (msg) => {
          toClient += msg.type === 'offer' ? msg.sdp.length : 100;
          session.send(msg);
        },
        (replaced) => {
          if (ended) return;
          // Another tab took the desktop's stream: this one says so and waits for the user, rather than taking it back.
          if (replaced) return end(GATEWAY_CLOSE.openedElsewhere, 'opened-elsewhere');
          void check().finally(() => end(GATEWAY_CLOSE.desktopUnreachable, 'agent-closed'));
        },
      );
      if (startAhead) agent.send(startAhead);
      startAhead = null;
    }

    /** The ticket, then the session's place and the user's access: the session opens, or ends saying why. */
    async function open(): Promise<void> {
      const grant = await consumeTicket(deps.db, ticket, deps.clock.now());
      if (ended) return;
      if (!grant) return end(GATEWAY_CLOSE.ticketRefused, 'ticket-refused');
      userId = grant.userId;
      session.machineId = grant.machineId;
      log = reqLog.child({ userId, machineId: grant.machineId, sessionId: session.id });
      const admitted = await admit(grant.userId, grant.machineId);
      if (admitted && !ended) begin(grant.userId, admitted.machine, admitted.endpoint);
    }

    /**
     * The session's place, the user's access and the desktop's address, looked up at once, not one after another (the
     * address is only a handle: nothing reaches the desktop unless both allow it). Null when the session ended instead.
     */
    async function admit(uid: string, machineId: string): Promise<{ machine: MachineRow; endpoint: Endpoint } | null> {
      // The per-user limit counts open sessions on every server (connect_sessions), so replicas cannot double it.
      const placing = reserveSession(deps.db, { id: session.id, userId: uid, machineId, openedAt, now: deps.clock.now() });
      const [placed, machine, found] = await Promise.all([
        placing,
        principalOf(uid, openedAt).then((who) => (who ? canConnect(deps.db, who, machineId) : null)),
        (mode === 'webrtc' ? deps.machines.agentOf(machineId) : deps.machines.endpointOf(machineId)).catch(() => null),
      ]).catch(async (err: unknown) => {
        // A lookup that failed after the place was taken gives it back before the session ends.
        if (await placing.catch(() => false)) await forgetSession(deps.db, session.id);
        throw err;
      });
      if (!placed) return refuse(GATEWAY_CLOSE.tooManySessions, 'too-many-sessions');
      if (ended) {
        void forgetSession(deps.db, session.id);
        return null;
      }
      reserved = true;
      if (!machine) return refuse(ACCESS_LOST.code, ACCESS_LOST.why, ACCESS_LOST.msg);
      // A seat that just changed hands: the desktop still has the previous student's home until it restarts.
      if (!runsWantedHome(machine)) return refuse(GATEWAY_CLOSE.desktopUnreachable, 'home-switching');
      if (machine.desired !== 'running' || machine.observed !== 'online') return refuse(GATEWAY_CLOSE.machineStopped, 'machine-stopped', await stoppedMessage(machine, uid));
      // The agent starts a moment after the desktop answers VNC: a tab that came first waits for it.
      const endpoint = found ?? (mode === 'webrtc' ? await agentSoon(machine.id) : null);
      if (ended) return null;
      if (!endpoint) return refuse(GATEWAY_CLOSE.desktopUnreachable, mode === 'webrtc' ? 'no-agent' : 'no-endpoint');
      return { machine, endpoint };
    }

    /** Ends the session before it began; null, for admit. */
    function refuse(code: number, why: string, msg?: Stopped): null {
      end(code, why, msg);
      return null;
    }

    /** An admitted session: counted, announced, greeted, watched, and joined to the desktop. */
    function begin(uid: string, machine: MachineRow, endpoint: Endpoint): void {
      sessionRow = true;
      live.set(session.id, session);
      counted = true;
      openSessions.inc();
      log.info({ machine: machine.name, mode }, 'desktop session opened');
      if (machine.courseId) announceSeat(machine.courseId, log);
      session.send({ type: 'hello', machineName: machine.name, idleStopMinutes: deps.idleStopMinutes });
      timer = setInterval(tick, CHECK_MS);
      timer.unref();
      unsubscribe = deps.events?.subscribe(uid, () => void check()) ?? null;
      if (mode === 'webrtc') startAgent(endpoint, uid);
      else relay.open(endpoint);
    }

    open().catch((err) => {
      log.error({ err }, 'desktop session failed');
      end(1011, 'gateway-error');
    });
  }

  /**
   * Writes the session's last input unless it was written already, and resolves once the database has it: a write
   * that input started a moment ago is waited for too, so the idle job never reads the row before it lands.
   */
  function flushSession(s: LiveSession): Promise<unknown> {
    const at = s.lastInputAt;
    if (at && !(s.flushedInputAt && s.flushedInputAt.getTime() >= at.getTime())) {
      s.flushedInputAt = at;
      const write = s.inputWritten.then(() => deps.db.update(connectSessions).set({ lastInputAt: at }).where(eq(connectSessions.id, s.id)));
      s.inputWritten = write.catch(() => undefined); // its caller hears of a failure; the next write goes ahead
      return write;
    }
    return s.inputWritten;
  }

  return {
    accept,
    /** Marks this server's open sessions alive (the per-user limit ignores sessions of a server that died). */
    async touch(): Promise<void> {
      await touchSessions(deps.db, [...live.keys()], deps.clock.now());
    },
    /** Writes every local session's last input, so the idle job sees this server's latest activity. */
    async flushInput(): Promise<void> {
      await Promise.all([...live.values()].map(flushSession));
    },
    /** Sends the 'Still there?' warning (or the class's end) once per stop time to the machine's sessions on this server. */
    warn(machineId: string, stopAt: Date, reason: 'idle' | 'class-end' = 'idle', timeZone?: string): number {
      let sent = 0;
      for (const s of live.values()) {
        const at = stopAt.toISOString();
        if (s.machineId !== machineId) continue;
        if (reason === 'class-end') {
          if (s.toldClassEnd === at) continue;
          s.toldClassEnd = at;
          s.send({ type: 'idle-warning', stopAt: at, reason, ...(timeZone ? { timeZone } : {}) });
        } else {
          if (s.warnedStopAt === at) continue;
          s.warnedStopAt = at;
          s.send({ type: 'idle-warning', stopAt: at });
        }
        sent++;
      }
      return sent;
    },
    /** Ends the machine's sessions on this server (it was stopped here). */
    endMachine(machineId: string, msg: Stopped): void {
      for (const s of [...live.values()]) if (s.machineId === machineId) s.end(GATEWAY_CLOSE.machineStopped, 'machine-stopped', msg);
    },
    closeAll(): void {
      for (const s of [...live.values()]) s.end(1001, 'server-closing');
    },
    openCount: () => live.size,
  };
}

export type Gateway = ReturnType<typeof createGateway>;
