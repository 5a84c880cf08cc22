import type RFB from '@novnc/novnc';
import { GATEWAY_CLOSE, type GatewayServerMessage } from '@hyperdesk/contract';
import { ApiError } from '../../api/http';
import { activeMessage, gatewayUrl, parseGatewayMessage, pingMessage, requestTicket } from '../../api/connect';
import { ticketFromDashboard } from '../../api/ticketHandoff';
import { earlyTicket, takeEarlySocket } from '../../early/dial';
import { preferredQuality, preferredTransport, QUALITY_KEY, startQuery, TRANSPORT_KEY, type Transport } from '../../early/prefs';
import { RtcStream, type Quality, type StreamStats } from './webrtc';
import { attachVncPaste, vncKeyboardField } from './vnckeys';
import { repeatsAsPresses } from './keyrepeat';

export type { Transport };

export type Phase =
  | { kind: 'connecting'; attempt: number }
  | { kind: 'connected' }
  | { kind: 'reconnecting'; attempt: number; inSeconds: number }
  | { kind: 'starting' }
  | { kind: 'offline'; reason: string | null }
  | { kind: 'hours-exhausted'; reason: string | null }
  | { kind: 'refused'; message: string; title?: string }
  | { kind: 'stopped'; reason: string }
  | { kind: 'disconnected' }
  /** Another tab (or computer) took the desktop's stream; this one waits for the user's "Use here". */
  | { kind: 'elsewhere' }
  | { kind: 'failed'; message: string };

export interface DesktopState {
  phase: Phase;
  rttMs: number | null;
  bitsPerSecond: number;
  /** Set while the gateway warns that the machine stops soon for lack of use. */
  idleStopAt: string | null;
  /** Why the machine stops at idleStopAt: no input ('idle'), or the end of the class ('class-end'). */
  idleReason: 'idle' | 'class-end';
  /** The zone whose wall clock idleStopAt is shown on (a class's end: the course's), else the browser's. */
  idleTimeZone: string | null;
  idleStopMinutes: number | null;
  remoteClipboard: string;
  transport: Transport;
  /** WebRTC only: frame rate, bit rate, loss and path, refreshed every second. */
  stats: StreamStats | null;
  hasAudio: boolean;
  muted: boolean;
  /** WebRTC only: the video quality the user chose (Auto adapts to the link). */
  quality: Quality;
}

/** No media path this long after the agent's offer: WebRTC cannot get through here, VNC takes over. */
export const MEDIA_TIMEOUT_MS = 5_000;
/** A media path that works (ICE answered) may take this long after the offer for its first frame and input channel. */
export const CONNECTED_TIMEOUT_MS = 20_000;
/** How long the gateway and the machine's agent may take to send their offer (the agent may still be starting). */
export const OFFER_TIMEOUT_MS = 10_000;

const MAX_RETRIES = 8;
/** A tab opened while its machine starts asks again this often: the picture comes within a moment of the machine. */
const STARTING_RETRY_MS = 2_000;
const PING_MS = 2_000;
const REFUSED = "We couldn't open this machine for you. It may belong to someone else, or the link is out of date.";

type Stopped = Extract<GatewayServerMessage, { type: 'stopped' }>;

// noVNC is big: only the connect tab loads it, once.
let rfbModule: Promise<typeof RFB> | null = null;
const loadRfb = () =>
  (rfbModule ??= import('@novnc/novnc')
    .then((m) => m.default)
    .catch((err: unknown) => {
      rfbModule = null; // a failed chunk load is retried by the next attempt
      throw err;
    }));

/**
 * One desktop connection in a connect tab: ticket → gateway WebSocket → noVNC, automatic reconnects with backoff
 * (a new ticket each time), connection quality, idle warnings and the clear end states. Plain TypeScript; the page
 * renders `state` through `onChange`.
 */
export class DesktopConnection {
  state: DesktopState = { phase: { kind: 'connecting', attempt: 1 }, rttMs: null, bitsPerSecond: 0, idleStopAt: null, idleReason: 'idle', idleTimeZone: null, idleStopMinutes: null, remoteClipboard: '', transport: preferredTransport(), stats: null, hasAudio: false, muted: true, quality: preferredQuality() };
  private gen = 0;
  private failures = 0;
  private refusedTickets = 0;
  private rfb: RFB | null = null;
  private ws: WebSocket | null = null;
  private rtc: RtcStream | null = null;
  /** The VNC view's text field for a phone's on-screen keyboard (made when first asked for). */
  private vncKeys: { focus(): void; remove(): void } | null = null;
  private vncPaste: (() => void) | null = null;
  private timers: ReturnType<typeof setInterval>[] = [];
  private retry: ReturnType<typeof setTimeout> | null = null;
  private bytes = 0;
  private stopped: Stopped | null = null;
  private userClosed = false;
  /** The dashboard that opened this tab may hand over the first ticket (api/ticketHandoff). */
  private handedTicket: Promise<Awaited<ReturnType<typeof requestTicket>>> | null = null;

  constructor(
    private readonly url: string,
    private readonly target: HTMLElement,
    private readonly onChange: (s: DesktopState) => void,
  ) {}

  start(): void {
    performance.mark?.('hyperdesk:connect-page'); // User Timing: when the page took over from its first script
    // The tab's first script may have asked the dashboard already (and dialled with its answer: openRtc).
    this.handedTicket = ticketFromDashboard(this.url, earlyTicket(this.url) ?? undefined);
    void this.attempt();
  }

  /** Ends the session on purpose (no reconnect). */
  disconnect(): void {
    this.userClosed = true;
    this.teardown();
    this.set({ phase: { kind: 'disconnected' }, idleStopAt: null });
  }

  /** A fresh start after an end state or a manual disconnect. */
  reconnect(): void {
    this.failures = 0;
    this.refusedTickets = 0;
    void this.attempt();
  }

  /** Switches between WebRTC and VNC (a new ticket, a new session). */
  useTransport(transport: Transport): void {
    try {
      localStorage.setItem(TRANSPORT_KEY, transport);
    } catch {
      /* private mode: the choice lasts this tab */
    }
    this.set({ transport, stats: null });
    this.reconnect();
  }

  /** Sets the video quality now and for the next sessions. */
  setQuality(quality: Quality): void {
    try {
      localStorage.setItem(QUALITY_KEY, quality);
    } catch {
      /* private mode: the choice lasts this tab */
    }
    this.rtc?.setQuality(quality);
    this.set({ quality });
  }

  lockPointer(): void {
    this.rtc?.lockPointer();
  }

  setMuted(muted: boolean): void {
    this.rtc?.setMuted(muted);
    this.set({ muted });
  }

  paste(text: string): void {
    this.rtc?.paste(text);
    this.rtc?.focus();
    this.rfb?.clipboardPasteFrom(text);
    this.rfb?.focus();
  }

  /** The answer to 'Still there?': counts as input on the gateway. */
  stillHere(): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(activeMessage());
    this.set({ idleStopAt: null });
    this.rfb?.focus();
  }

  focus(): void {
    this.rtc?.focus();
    this.rfb?.focus();
  }

  /**
   * Opens a phone's or tablet's on-screen keyboard: the desktop's text field takes the focus (again: a keyboard the
   * user closed opens only on a new focus). Call it from the user's tap, or the browser shows no keyboard.
   */
  showKeyboard(): void {
    const active = document.activeElement;
    if (active instanceof HTMLElement && this.target.contains(active)) active.blur();
    if (this.rfb && !this.vncKeys) this.vncKeys = vncKeyboardField(this.target, this.rfb);
    this.rtc?.focus();
    this.vncKeys?.focus();
  }

  destroy(): void {
    this.gen++;
    this.userClosed = true;
    this.teardown();
  }

  private set(patch: Partial<DesktopState>): void {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }

  private teardown(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.timers.forEach((t) => clearTimeout(t));
    this.timers = [];
    if (this.rtc) this.ws?.close(1000);
    this.rtc?.close();
    this.rtc = null;
    this.vncKeys?.remove();
    this.vncKeys = null;
    this.vncPaste?.();
    this.vncPaste = null;
    const rfb = this.rfb;
    this.rfb = null;
    this.ws = null;
    try {
      rfb?.disconnect();
    } catch {
      /* already gone */
    }
  }

  private async attempt(): Promise<void> {
    const gen = ++this.gen;
    this.teardown();
    this.userClosed = false;
    this.stopped = null;
    this.set({ phase: { kind: 'connecting', attempt: this.failures + 1 }, idleStopAt: null, stats: null, hasAudio: false });
    const rfbLoading = this.state.transport === 'vnc' ? loadRfb().catch(() => null) : Promise.resolve(null); // fetched while the ticket is on its way
    let answer;
    try {
      const own = requestTicket(this.url);
      const handed = this.handedTicket;
      this.handedTicket = null; // the first attempt only: a reconnect's ticket is this tab's own
      answer = await (handed ? Promise.race([own, handed]) : own);
    } catch (err) {
      if (gen === this.gen) this.ticketRefused(err);
      return;
    }
    if (this.state.transport === 'webrtc') return this.openRtc(gen, answer.wsPath);
    const Rfb = await rfbLoading;
    if (gen !== this.gen) return;
    if (!Rfb) return this.retryLater();
    const ws = new WebSocket(gatewayUrl(answer.wsPath));
    ws.binaryType = 'arraybuffer';
    ws.addEventListener('message', (e) => {
      if (typeof e.data === 'string') this.onStatus(e.data, ws);
      else this.bytes += (e.data as ArrayBuffer).byteLength;
    });
    ws.addEventListener('close', (e) => {
      if (gen === this.gen) this.closed(e.code);
    });
    const rfb = new Rfb(this.target, ws, { shared: true });
    // noVNC's keyboard sends through it too. Whether the server took QEMU's extended key events has no public getter.
    const extended = () => (rfb as unknown as { _qemuExtKeyEventSupported?: boolean })._qemuExtKeyEventSupported === true;
    rfb.sendKey = repeatsAsPresses(rfb.sendKey.bind(rfb), extended);
    rfb.scaleViewport = true;
    rfb.resizeSession = false;
    rfb.focusOnClick = true;
    rfb.qualityLevel = 6;
    rfb.compressionLevel = 2;
    rfb.background = 'var(--desktop-bg, #0b1020)';
    rfb.addEventListener('connect', () => {
      if (gen !== this.gen) return;
      this.failures = 0;
      this.refusedTickets = 0;
      this.set({ phase: { kind: 'connected' } });
      rfb.focus();
    });
    rfb.addEventListener('clipboard', (e) => {
      const text = (e as CustomEvent<{ text: string }>).detail.text;
      this.set({ remoteClipboard: text });
      navigator.clipboard?.writeText(text).catch(() => undefined);
    });
    this.vncPaste = attachVncPaste(this.target, rfb);
    this.rfb = rfb;
    this.ws = ws;
    this.startMeters(ws);
  }

  private openRtc(gen: number, wsPath: string): void {
    // The socket the tab's first script dialled with this ticket, if it did (early/dial.ts), else a new one.
    const early = takeEarlySocket(wsPath);
    const ws = early?.ws ?? new WebSocket(gatewayUrl(`${wsPath}&mode=webrtc${startQuery(this.state.quality)}`));
    const shown = { frame: false };
    const rtc = this.rtcStream(gen, ws, shown);
    const offerCame = this.fallBackUnlessShown(gen, rtc, shown);
    const onMessage = (e: MessageEvent) => {
      if (typeof e.data !== 'string') return;
      const msg = parseGatewayMessage(e.data);
      if (!msg) return;
      if (msg.type === 'offer') offerCame();
      if (early?.peer.taken.has(e)) return; // the first script's peer connection has applied it
      if (msg.type === 'rtc-config' || msg.type === 'offer' || msg.type === 'ice') return void rtc.onMessage(msg).catch(() => undefined);
      this.onStatus(e.data, ws);
    };
    const onClose = (e: CloseEvent) => {
      if (gen !== this.gen) return;
      // The machine has no working streaming agent: VNC still shows the desktop. (An agent that streamed and then
      // went away gets a new WebRTC attempt first: a restarted agent is back in a moment.)
      if (e.code === GATEWAY_CLOSE.desktopUnreachable && !shown.frame && !this.userClosed) return this.fallBack();
      this.closed(e.code);
    };
    ws.addEventListener('message', onMessage);
    ws.addEventListener('close', onClose);
    // The stream's start went in the socket's URL: the gateway starts it as soon as the session opens.
    rtc.begin(this.state.quality);
    if (early) rtc.adopt(early.peer);
    // What the first script's socket heard before this page took it, in order.
    for (const e of early?.heard ?? []) {
      if (e.type === 'close') onClose(e as CloseEvent);
      else onMessage(e as MessageEvent);
    }
    this.startMeters(ws);
    this.watchRtcStats(gen, rtc);
  }

  /** The desktop as WebRTC video on `ws`: its first frame makes the tab connected; its clipboard and sound. */
  private rtcStream(gen: number, ws: WebSocket, shown: { frame: boolean }): RtcStream {
    const send = (msg: object) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(msg));
    const rtc = new RtcStream(this.target, send, {
      frame: () => {
        if (gen !== this.gen) return;
        shown.frame = true;
        this.failures = 0;
        this.refusedTickets = 0;
        this.set({ phase: { kind: 'connected' } });
        rtc.focus();
      },
      clipboard: (text) => {
        this.set({ remoteClipboard: text });
        navigator.clipboard?.writeText(text).catch(() => undefined);
      },
      audio: () => this.set({ hasAudio: true }),
    });
    rtc.setMuted(this.state.muted);
    this.rtc = rtc;
    this.ws = ws;
    return rtc;
  }

  /**
   * No offer within OFFER_TIMEOUT_MS, or no media path within MEDIA_TIMEOUT_MS of the agent's offer (UDP blocked):
   * VNC instead. A path that works but has shown no picture yet (a busy desktop) gets until CONNECTED_TIMEOUT_MS.
   * Answers what to call when the offer comes (it ends the offer's timer and starts the media's).
   */
  private fallBackUnlessShown(gen: number, rtc: RtcStream, shown: { frame: boolean }): () => void {
    const fallBackIn = (ms: number, path?: 'check') => {
      const t = setTimeout(() => {
        if (gen !== this.gen || shown.frame) return;
        if (path !== 'check') return this.fallBack();
        void rtc.pathUp().then((up) => {
          if (gen !== this.gen || shown.frame) return;
          if (up) fallBackIn(CONNECTED_TIMEOUT_MS - MEDIA_TIMEOUT_MS);
          else this.fallBack();
        });
      }, ms);
      this.timers.push(t);
      return t;
    };
    const noOffer = fallBackIn(OFFER_TIMEOUT_MS);
    let offered = false;
    return () => {
      if (offered) return;
      offered = true;
      clearTimeout(noOffer);
      fallBackIn(MEDIA_TIMEOUT_MS, 'check');
    };
  }

  private watchRtcStats(gen: number, rtc: RtcStream): void {
    this.timers.push(
      setInterval(() => {
        void rtc.stats().then((stats) => {
          if (stats && gen === this.gen) this.set({ stats, bitsPerSecond: stats.kbps * 1000 });
        });
      }, 1000),
    );
  }

  /** WebRTC showed nothing: the same desktop over VNC, with a fresh ticket. */
  private fallBack(): void {
    this.set({ transport: 'vnc', stats: null });
    void this.attempt();
  }

  private startMeters(ws: WebSocket): void {
    this.bytes = 0;
    let last = performance.now();
    this.timers.push(
      setInterval(() => {
        const now = performance.now();
        if (this.state.transport === 'vnc') this.set({ bitsPerSecond: Math.round((this.bytes * 8 * 1000) / Math.max(1, now - last)) });
        this.bytes = 0;
        last = now;
      }, 1000),
      setInterval(() => {
        if (ws.readyState === WebSocket.OPEN) ws.send(pingMessage(performance.now()));
      }, PING_MS),
    );
  }

  private onStatus(text: string, ws: WebSocket): void {
    const msg = parseGatewayMessage(text);
    if (!msg) return;
    if (msg.type === 'pong') this.set({ rttMs: Math.max(0, Math.round(performance.now() - msg.t)) });
    else if (msg.type === 'hello') {
      this.set({ idleStopMinutes: msg.idleStopMinutes });
      if (ws.readyState === WebSocket.OPEN) ws.send(pingMessage(performance.now()));
    } else if (msg.type === 'idle-warning') this.set({ idleStopAt: msg.stopAt, idleReason: msg.reason ?? 'idle', idleTimeZone: msg.timeZone ?? null });
    else if (msg.type === 'stopped') this.stopped = msg;
  }

  private closed(code: number): void {
    this.teardown();
    this.set({ idleStopAt: null, rttMs: null, bitsPerSecond: 0 });
    if (this.userClosed) return;
    const stop = this.stopped;
    if (stop?.code === 'hours-exhausted') return this.set({ phase: { kind: 'hours-exhausted', reason: stop.reason } });
    if (stop?.code === 'session-ended') return this.set({ phase: { kind: 'refused', title: 'Your session was ended', message: stop.reason } });
    if (stop?.code === 'access-lost' || code === GATEWAY_CLOSE.accessLost) return this.set({ phase: { kind: 'refused', message: REFUSED } });
    if (code === GATEWAY_CLOSE.openedElsewhere) return this.set({ phase: { kind: 'elsewhere' } });
    if (stop || code === GATEWAY_CLOSE.machineStopped) return this.set({ phase: { kind: 'stopped', reason: stop?.reason ?? 'It was stopped from the dashboard.' } });
    if (code === GATEWAY_CLOSE.tooManySessions) {
      return this.set({ phase: { kind: 'failed', message: 'You have too many desktop tabs open. Close one and try again.' } });
    }
    // A ticket can expire on a very slow link between issue and use: try a fresh one twice before giving up.
    if (code === GATEWAY_CLOSE.ticketRefused && ++this.refusedTickets > 2) return this.set({ phase: { kind: 'refused', message: REFUSED } });
    this.retryLater();
  }

  private ticketRefused(err: unknown): void {
    if (err instanceof ApiError) {
      if (err.status === 404 || err.status === 401 || err.status === 400) return this.set({ phase: { kind: 'refused', message: REFUSED } });
      if (err.code === 'machine-starting') {
        this.set({ phase: { kind: 'starting' } });
        this.retry = setTimeout(() => void this.attempt(), STARTING_RETRY_MS);
        return;
      }
      if (err.code === 'machine-offline') return this.set({ phase: { kind: 'offline', reason: null } });
      if (err.code === 'hours-exhausted') return this.set({ phase: { kind: 'hours-exhausted', reason: null } });
    }
    this.retryLater();
  }

  private retryLater(): void {
    this.failures++;
    if (this.failures > MAX_RETRIES) {
      return this.set({ phase: { kind: 'failed', message: 'We lost the connection to your machine and could not get it back.' } });
    }
    const delay = Math.min(15_000, 1000 * 2 ** (this.failures - 1)) + Math.round(Math.random() * 300);
    this.set({ phase: { kind: 'reconnecting', attempt: this.failures, inSeconds: Math.ceil(delay / 1000) } });
    this.retry = setTimeout(() => void this.attempt(), delay);
  }
}
