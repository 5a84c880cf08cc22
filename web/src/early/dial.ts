import { askDashboard, takeFromOpener } from './ticketChannel';
import { preferredQuality, preferredTransport, startQuery } from './prefs';
import { answerEarly, type EarlyPeer } from './peer';
import { answerDue } from './gate';

/**
 * The Connect tab's first script: inline in index.html (vite.config.ts earlyScript), run while the page is parsed,
 * ahead of the app's code. A tab opened from the dashboard gets its first ticket from the dashboard
 * (api/ticketHandoff): this takes it from the opener's window (or asks for it) at once and, in WebRTC mode, dials
 * the desktop's gateway with it (the stream's start in the URL) while the app's code is still loading, and answers
 * the agent's offer (early/peer.ts). The page's DesktopConnection then adopts the socket, with what it has heard so
 * far and the peer connection (takeEarlySocket), or closes them. Nothing here is trusted: the gateway checks the
 * ticket and the page checks every message, as for a socket of its own.
 */
export interface EarlySocket {
  ws: WebSocket;
  wsPath: string;
  /** The socket's messages and close, in order, until the page adopts it. */
  heard: (MessageEvent | CloseEvent)[];
  /** The peer connection made with the socket, answered if the agent's offer came before the page (early/peer.ts). */
  peer: EarlyPeer;
}

interface Early {
  url: string;
  ticket: Promise<unknown>;
  ticketTaken: boolean;
  socket: (EarlySocket & { stop(): void }) | null;
  socketTaken: boolean;
}

/**
 * Kept on the window, not in this module: index.html runs this script as its own inline copy (vite.config.ts), and the
 * page's copy of this module reads what that one dialled.
 */
const EARLY_KEY = '__hyperdeskEarly';
const slot = globalThis as unknown as { [EARLY_KEY]?: Early };

/**
 * The connect tab's fragment as JSON (spec §7: base64 of UTF-8 JSON), or null; no checks of its fields. Here, not in
 * pages/Connect/payload.ts (which checks the whole payload with the contract), so the first script stays small.
 */
export function fragmentJson(hash: string): unknown {
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!raw || raw.length > 8000) return null;
  try {
    const bin = atob(decodeURIComponent(raw).replace(/-/g, '+').replace(/_/g, '/'));
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}

/** The connect link's `url` from the tab's fragment (the page checks the whole payload itself). */
export function connectUrl(hash: string): string | null {
  const url = (fragmentJson(hash) as { url?: unknown } | null)?.url;
  return typeof url === 'string' && url.length <= 2000 && url.startsWith('/v1/slot/connect') ? url : null;
}

/** The early socket and its peer; `settle` once the peer's answer is sent or the socket closes (early/gate.ts). */
function open(wsPath: string, settle: () => void): EarlySocket & { stop(): void } {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${scheme}//${location.host}${wsPath}&mode=webrtc${startQuery(preferredQuality())}`);
  ws.addEventListener('close', settle);
  const answering = answerEarly(ws, (msg) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify(msg));
    if (msg.type === 'answer') settle();
  });
  const s = { ws, wsPath, heard: [] as (MessageEvent | CloseEvent)[], peer: answering.peer, stop };
  const hear = (e: Event) => s.heard.push(e as MessageEvent | CloseEvent);
  ws.addEventListener('message', hear);
  ws.addEventListener('close', hear);
  function stop() {
    ws.removeEventListener('message', hear);
    ws.removeEventListener('close', hear);
    answering.stop();
  }
  return s;
}

/**
 * On a Connect tab: the dashboard's ticket, taken from `opener` (the window that opened this tab, read before the tab
 * dropped it) or asked for; over WebRTC, the gateway dialled with it.
 */
export function dialEarly(opener: unknown): void {
  if (location.pathname !== '/connect') return;
  const url = connectUrl(location.hash);
  if (!url) return;
  const fromOpener = takeFromOpener(opener, url);
  const e: Early = { url, ticket: fromOpener ?? askDashboard(url), ticketTaken: false, socket: null, socketTaken: false };
  slot[EARLY_KEY] = e;
  if (preferredTransport() !== 'webrtc') return;
  // The app's start waits for this answer (early/gate.ts): from now when the dashboard is handing its ticket over,
  // else once the socket is dialled.
  let settle = () => {};
  const due = new Promise<void>((resolve) => (settle = resolve));
  if (fromOpener) answerDue(due);
  void e.ticket.then((answer) => {
    const wsPath = (answer as { wsPath?: unknown } | null)?.wsPath;
    if (e.socketTaken || typeof wsPath !== 'string' || !wsPath.startsWith('/v1/')) return settle();
    e.socket = open(wsPath, settle);
    answerDue(due);
  });
}

/** The dashboard's ticket this tab already asked for (once, for the same link), or null. */
export function earlyTicket(url: string): Promise<unknown> | null {
  const early = slot[EARLY_KEY];
  if (!early || early.url !== url || early.ticketTaken) return null;
  early.ticketTaken = true;
  return early.ticket;
}

/**
 * The socket dialled with the ticket for `wsPath`, with what it has heard (once); a socket dialled with another
 * ticket (the tab's own came first) is closed, and none is dialled from now on.
 */
export function takeEarlySocket(wsPath: string): EarlySocket | null {
  const early = slot[EARLY_KEY];
  if (!early) return null;
  early.socketTaken = true;
  const s = early.socket;
  early.socket = null;
  if (!s) return null;
  s.stop();
  if (s.wsPath === wsPath) return s;
  s.peer.pc.close();
  s.ws.close(1000);
  return null;
}
