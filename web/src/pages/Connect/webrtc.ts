import type { GatewayServerMessage, IceServer } from '@hyperdesk/contract';
import { isPasteKey, keyField, keysymOf, xButtonOf } from './keysym';
import { bindTouch } from './touch';
import type { Quality } from '../../early/prefs';
import { configure, sendCandidates, type EarlyPeer } from '../../early/peer';
import { wheelNotches } from './wheel';
import { inputOrder, type InputOrder } from './inputorder';

export interface StreamStats {
  fps: number;
  kbps: number;
  rttMs: number | null;
  lossPct: number;
  /** e.g. "udp host", "tcp relay" */
  transport: string;
}

export type { Quality };

type Signal = { type: 'answer'; sdp: string } | { type: 'ice'; candidate: string; sdpMLineIndex: number };

const ACTIVITY_MS = 5_000; // the gateway hears about data channel input at most this often
/** How long the picture may keep its old size after a size request before the tab asks again, and how often. */
const SIZE_RECHECK_MS = 3000;
const SIZE_ASKS = 4;
/** The desktop follows the video area's size once it has held still this long (a window drag is one resize). */
export const RESIZE_DEBOUNCE_MS = 400;

/**
 * The desktop as WebRTC video: signaling over the gateway socket (the agent offers, we answer), a <video> in
 * `target`, and mouse and keyboard sent over the data channel 'input' as X events. Plain TypeScript.
 */
export class RtcStream {
  readonly video: HTMLVideoElement;
  /** Where the keyboard goes: an invisible text field, so text without key events (IME, compose, dictation) and
   *  the browser's paste reach the tab too. */
  private readonly keys: HTMLTextAreaElement;
  /** The key of a Ctrl+V / Shift+Insert waiting for the browser's paste event (it goes after the text). */
  private pendingPaste: { code: string; s: number } | null = null;
  private pasteTimer: ReturnType<typeof setTimeout> | null = null;
  private pc: RTCPeerConnection | null = null;
  /** The first script's connection, made before the offer came (early/peer.ts): the offer's answer uses it. */
  private spare: RTCPeerConnection | null = null;
  private dc: RTCDataChannel | null = null;
  /** Numbers what goes over `dc` (inputorder.ts); one per channel. */
  private order: InputOrder | null = null;
  /** The number of the desktop's last clipboard seen: an unordered channel can bring an older one after it. */
  private clipSeen = -1;
  private iceServers: IceServer[] = [];
  private lastActivity = 0;
  private held = new Map<string, number>();
  private removers: (() => void)[] = [];
  private lastBytes = 0;
  private lastAt = 0;
  private firstFrame = false;
  private channelOpen = false;
  private ready = false;
  private quality: Quality = 'auto';
  private sentSize = '';
  private resizeTimer: ReturnType<typeof setTimeout> | null = null;
  private sizeCheck: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly target: HTMLElement,
    private readonly signal: (msg: Signal | { type: 'activity' }) => void,
    private readonly on: { frame(): void; clipboard(text: string): void; audio(): void },
  ) {
    const v = document.createElement('video');
    v.autoplay = true;
    v.playsInline = true;
    v.muted = true; // autoplay needs it; audio plays through its own element below once the user unmutes
    v.tabIndex = 0;
    v.dataset.testid = 'desktop-video';
    v.style.cssText = 'position:absolute;inset:0;width:100%;height:100%;object-fit:contain;outline:none;background:#0b1020';
    target.appendChild(v);
    this.video = v;
    this.keys = keyField(target);
    this.bindInput();
    this.removers.push(bindTouch(v, (e) => this.point(e), (m) => this.send(m))); // taps, drags, two-finger scroll (touch.ts)
    this.watchSize();
  }

  /** The quality the stream started with (its start went in the socket's URL: early/prefs.ts startQuery). */
  begin(quality: Quality): void {
    this.quality = quality;
  }

  /** The bit rate cap for the agent's encoder (Auto adapts below its cap to the measured loss and delay). */
  setQuality(quality: Quality): void {
    this.quality = quality;
    this.send({ t: 'quality', q: quality });
  }

  /**
   * The desktop takes the video area's size (in CSS pixels; the agent fits it within the desktop's maximum and
   * keeps its shape), asked for once the area holds still, and again whenever the input channel (re)opens.
   */
  private watchSize(): void {
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => {
      if (this.resizeTimer) clearTimeout(this.resizeTimer);
      this.resizeTimer = setTimeout(() => this.sendSize(), RESIZE_DEBOUNCE_MS);
    });
    ro.observe(this.target);
    this.removers.push(() => {
      ro.disconnect();
      if (this.resizeTimer) clearTimeout(this.resizeTimer);
      if (this.sizeCheck) clearTimeout(this.sizeCheck);
    });
  }

  private sendSize(force = false): void {
    const w = Math.round(this.target.clientWidth);
    const h = Math.round(this.target.clientHeight);
    const key = `${w}x${h}`;
    if (!w || !h || (key === this.sentSize && !force) || this.dc?.readyState !== 'open') return;
    this.sentSize = key;
    this.order?.send({ t: 'size', w, h });
    this.recheckSize(key, `${this.video.videoWidth}x${this.video.videoHeight}`, SIZE_ASKS - 1);
  }

  /**
   * A size request can be lost on the desktop's side (a viewer's connection that ends just after it puts the
   * desktop back to its full size): when the picture still has the size it had before the request, a moment
   * later, the tab asks again (a few times at most: a desktop that is already that shape keeps the picture, the
   * agent does nothing for a size it has). A request sent before the first frame has no size to compare with, so
   * it is asked again in any case: its first frame may well be the desktop's old size.
   */
  private recheckSize(key: string, before: string, asksLeft: number): void {
    if (this.sizeCheck) clearTimeout(this.sizeCheck);
    if (asksLeft <= 0) return;
    this.sizeCheck = setTimeout(() => {
      const now = `${this.video.videoWidth}x${this.video.videoHeight}`;
      const changed = before !== '0x0' && now !== before;
      if (key !== this.sentSize || changed || this.dc?.readyState !== 'open') return;
      const [w, h] = key.split('x').map(Number);
      this.dc.send(JSON.stringify({ t: 'size', w, h }));
      this.recheckSize(key, before, asksLeft - 1);
    }, SIZE_RECHECK_MS);
  }

  /** A signaling message from the gateway. */
  async onMessage(msg: GatewayServerMessage): Promise<void> {
    if (msg.type === 'rtc-config') this.iceServers = msg.iceServers;
    else if (msg.type === 'offer') await this.answer(msg.sdp);
    else if (msg.type === 'ice' && this.pc) await this.pc.addIceCandidate({ candidate: msg.candidate, sdpMLineIndex: msg.sdpMLineIndex }).catch(() => undefined);
  }

  private async answer(sdp: string): Promise<void> {
    const pc = this.spare ?? new RTCPeerConnection({ iceServers: this.iceServers, bundlePolicy: 'max-bundle' });
    if (this.spare) configure(pc, this.iceServers);
    this.spare = null;
    this.attach(pc);
    await pc.setRemoteDescription({ type: 'offer', sdp });
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    this.signal({ type: 'answer', sdp: pc.localDescription?.sdp ?? answer.sdp ?? '' });
  }

  /**
   * The connection the tab's first script made: answered, with the events it has had; or, when the offer has not
   * come yet, the one this stream answers it with.
   */
  adopt(peer: EarlyPeer): void {
    if (!peer.answered) {
      this.spare = peer.pc;
      return;
    }
    const { track, channel } = this.attach(peer.pc);
    for (const e of peer.had) {
      if ('track' in e) track(e);
      else channel(e);
    }
  }

  /** Makes `pc` this stream's connection: its video and sound, its input channel, its candidates to the gateway. */
  private attach(pc: RTCPeerConnection): { track(e: RTCTrackEvent): void; channel(e: RTCDataChannelEvent): void } {
    if (this.pc !== pc) this.pc?.close();
    this.pc = pc;
    const track = (e: RTCTrackEvent) => {
      if (e.track.kind === 'audio') return this.on.audio();
      this.video.srcObject = e.streams[0] ?? new MediaStream([e.track]);
      void this.video.play().catch(() => undefined);
      this.watchFrames();
    };
    const channel = (e: RTCDataChannelEvent) => {
      if (e.channel.label === 'input') this.takeChannel(e.channel);
    };
    pc.ontrack = track;
    pc.ondatachannel = channel;
    pc.onicecandidate = sendCandidates((msg) => this.signal(msg));
    return { track, channel };
  }

  private takeChannel(dc: RTCDataChannel): void {
    this.dc = dc;
    this.order = inputOrder((text) => dc.readyState === 'open' && dc.send(text));
    this.clipSeen = -1;
    // The first size (and a quality chosen while connecting) go as soon as the channel can carry them.
    const opened = () => {
      this.channelOpen = true;
      this.readyWhenBoth();
      this.sendSize(true);
      if (this.quality !== 'auto') this.setQuality(this.quality);
    };
    if (dc.readyState === 'open') opened();
    else dc.onopen = opened;
    dc.onmessage = (m) => {
      try {
        const data = JSON.parse(String(m.data)) as { t?: string; text?: unknown; n?: unknown };
        if (data.t !== 'clip' || typeof data.text !== 'string') return;
        const n = typeof data.n === 'number' ? data.n : this.clipSeen + 1;
        if (n <= this.clipSeen) return;
        this.clipSeen = n;
        this.on.clipboard(data.text);
      } catch {
        /* not ours */
      }
    };
  }

  /**
   * Whether the media path works even though the tab is not connected yet: ICE connected, or a connectivity check
   * answered, or a frame decoded (a busy desktop or browser can take seconds more for the first frame or the data
   * channel; blocked UDP never gets this far).
   */
  async pathUp(): Promise<boolean> {
    const pc = this.pc;
    if (!pc) return false;
    if (this.firstFrame || pc.connectionState === 'connected' || ['connected', 'completed'].includes(pc.iceConnectionState)) return true;
    if (pc.iceConnectionState === 'failed' || pc.connectionState === 'failed') return false;
    const report = await pc.getStats().catch(() => null);
    let answered = false;
    report?.forEach((s: Record<string, unknown>) => {
      if (s.type === 'candidate-pair' && Number(s.responsesReceived ?? 0) > 0) answered = true;
    });
    return answered;
  }

  private watchFrames(): void {
    const v = this.video as HTMLVideoElement & { requestVideoFrameCallback?: (cb: () => void) => number };
    const seen = () => {
      this.firstFrame = true;
      this.readyWhenBoth();
    };
    if (v.requestVideoFrameCallback) v.requestVideoFrameCallback(seen);
    else v.addEventListener('playing', seen, { once: true });
  }

  /**
   * Connected means the picture shows and input goes through: the data channel can open after the first frame
   * (SCTP needs its own round trips after DTLS), and keys typed before it opened would be lost.
   */
  private readyWhenBoth(): void {
    if (this.ready || !this.firstFrame || !this.channelOpen) return;
    this.ready = true;
    this.on.frame();
  }

  setMuted(muted: boolean): void {
    this.video.muted = muted;
  }

  /** Sends one input event; tells the gateway (throttled) so idle protection sees the user. */
  send(msg: Record<string, unknown>): void {
    if (this.dc?.readyState !== 'open') return;
    this.order?.send(msg);
    // A clipboard sync or the release of held keys when the tab loses the focus is not the user at the desktop.
    if (msg.t !== 'clip' && msg.t !== 'reset') this.active();
  }

  /** A relative move while the pointer is locked (mouse-look). */
  private moveBy(dx: number, dy: number): void {
    if (this.dc?.readyState !== 'open') return;
    this.order?.moveBy(dx, dy);
    this.active();
  }

  private active(): void {
    const now = performance.now();
    if (now - this.lastActivity <= ACTIVITY_MS) return;
    this.lastActivity = now;
    this.signal({ type: 'activity' });
  }

  paste(text: string): void {
    this.send({ t: 'clip', text });
  }

  /** Captures the mouse for mouse-look (relative motion while locked); keys go to the desktop too. */
  lockPointer(): void {
    this.keys.focus({ preventScroll: true });
    // Chrome answers with a promise that rejects when the lock is refused (no user gesture, a frame without it).
    void Promise.resolve((this.video.requestPointerLock as () => Promise<void> | void)?.call(this.video)).catch(() => undefined);
  }

  focus(): void {
    this.keys.focus({ preventScroll: true });
  }

  /** One key press and release for each character (the agent maps a keysym the desktop's keymap lacks). */
  typeText(text: string): void {
    for (const ch of text.replace(/\r\n?/g, '\n')) {
      const s = ch === '\n' ? 0xff0d : ch === '\t' ? 0xff09 : ch === '\b' ? 0xff08 : keysymOf({ key: ch, code: '' });
      if (s === null) continue;
      this.send({ t: 'k', s, d: true });
      this.send({ t: 'k', s, d: false });
    }
  }

  /** The paste key goes to the desktop once its clipboard holds the pasted text (or at once without a paste event). */
  private sendPasteKey(): void {
    if (this.pasteTimer) clearTimeout(this.pasteTimer);
    this.pasteTimer = null;
    const p = this.pendingPaste;
    this.pendingPaste = null;
    if (!p) return;
    this.held.set(p.code, p.s);
    this.send({ t: 'k', s: p.s, d: true });
  }

  private point(e: { clientX: number; clientY: number }): { x: number; y: number } | null {
    const v = this.video;
    if (!v.videoWidth) return null;
    const r = v.getBoundingClientRect();
    const scale = Math.min(r.width / v.videoWidth, r.height / v.videoHeight);
    const left = r.left + (r.width - v.videoWidth * scale) / 2;
    const top = r.top + (r.height - v.videoHeight * scale) / 2;
    const x = Math.round((e.clientX - left) / scale);
    const y = Math.round((e.clientY - top) / scale);
    return { x: Math.max(0, Math.min(v.videoWidth - 1, x)), y: Math.max(0, Math.min(v.videoHeight - 1, y)) };
  }

  private bindInput(): void {
    const letGoOfButtons = this.bindMouse();
    this.bindKeyboard(letGoOfButtons);
  }

  /** A listener on the element until the stream ends. */
  private listen<K extends keyof HTMLElementEventMap>(el: HTMLElement, type: K, fn: (e: HTMLElementEventMap[K]) => void): void {
    el.addEventListener(type, fn as EventListener);
    this.removers.push(() => el.removeEventListener(type, fn as EventListener));
  }

  /** A listener on the window (capture phase) until the stream ends. */
  private onWindow<K extends keyof WindowEventMap>(type: K, fn: (e: WindowEventMap[K]) => void): void {
    window.addEventListener(type, fn, true);
    this.removers.push(() => window.removeEventListener(type, fn, true));
  }

  /** Pointer, buttons and wheel on the picture; answers what forgets the buttons held (the agent lets go of them). */
  private bindMouse(): () => void {
    const v = this.video;
    const k = this.keys;
    const add = <K extends keyof HTMLElementEventMap>(type: K, fn: (e: HTMLElementEventMap[K]) => void) => this.listen(v, type, fn);
    const locked = () => document.pointerLockElement === v;
    // The video itself never keeps the focus: the keyboard goes through the text field.
    add('focus', () => k.focus({ preventScroll: true }));
    add('mousemove', (e) => {
      if (locked()) return this.moveBy(e.movementX, e.movementY);
      const p = this.point(e);
      if (p) this.send({ t: 'm', ...p });
    });
    // A button pressed on the picture is let go wherever the mouse is released (over the toolbar, outside the
    // window), and the pointer follows the mouse off the picture until then (to its edge): else the desktop kept the
    // button held, a drag that never ended.
    const pressed = new Set<number>();
    add('mousedown', (e) => {
      k.focus({ preventScroll: true });
      e.preventDefault();
      const b = xButtonOf(e.button);
      if (!b) return;
      const p = this.point(e);
      if (p && !locked()) this.send({ t: 'm', ...p });
      pressed.add(b);
      this.send({ t: 'b', b, d: true });
    });
    this.onWindow('mouseup', (e) => {
      const b = xButtonOf(e.button);
      if (!b || !pressed.delete(b)) return;
      e.preventDefault(); // the back and forward buttons' own action (the tab's history) waits for their release
      this.send({ t: 'b', b, d: false });
    });
    this.onWindow('mousemove', (e) => {
      const p = pressed.size && e.target !== v && !locked() ? this.point(e) : null;
      if (p) this.send({ t: 'm', ...p });
    });
    add('contextmenu', (e) => e.preventDefault());
    const notches = wheelNotches();
    add('wheel', (e) => {
      e.preventDefault();
      const n = notches(e);
      if (n) this.send({ t: 'w', ...n });
    });
    return () => pressed.clear();
  }

  /** Keys, paste and text through the invisible text field; `letGoOfButtons` when the tab loses the focus. */
  private bindKeyboard(letGoOfButtons: () => void): void {
    const k = this.keys;
    const addKeys = <K extends keyof HTMLElementEventMap>(type: K, fn: (e: HTMLElementEventMap[K]) => void) => this.listen(k, type, fn);
    addKeys('keydown', (e) => {
      const s = keysymOf(e);
      if (s === null || e.isComposing) return;
      if (isPasteKey(e)) {
        // Not prevented: the browser answers with a paste event carrying this computer's clipboard (no permission
        // needed); its text becomes the desktop's clipboard first, then the key goes so the desktop app pastes it.
        this.pendingPaste = { code: e.code, s };
        this.pasteTimer = setTimeout(() => this.sendPasteKey(), 100);
        return;
      }
      e.preventDefault();
      this.held.set(e.code, s);
      this.send({ t: 'k', s, d: true });
    });
    addKeys('keyup', (e) => {
      if (this.pendingPaste?.code === e.code) this.sendPasteKey();
      const s = this.held.get(e.code) ?? keysymOf(e);
      this.held.delete(e.code);
      if (s === null) return;
      e.preventDefault();
      this.send({ t: 'k', s, d: false });
    });
    // Leaving the tab mid-chord (Alt+Tab, a click outside the video, another tab) must not leave Ctrl or a
    // button pressed on the desktop: the agent lets go of everything it holds.
    addKeys('paste', (e) => {
      e.preventDefault();
      const text = e.clipboardData?.getData('text/plain') ?? '';
      if (text) this.paste(text);
      this.sendPasteKey();
    });
    // Text that comes without key events: an IME's or compose's result, dictation, an on-screen keyboard.
    addKeys('input', (e) => {
      const ie = e as InputEvent;
      if (ie.inputType === 'insertCompositionText' || ie.isComposing) return;
      if (ie.inputType === 'deleteContentBackward') this.typeText('\b');
      else if (ie.inputType.startsWith('insert')) this.typeText(ie.data ?? ie.dataTransfer?.getData('text/plain') ?? '');
      k.value = '';
    });
    addKeys('compositionend', (e) => {
      this.typeText(e.data);
      k.value = '';
    });
    const release = () => {
      this.pendingPaste = null;
      this.held.clear();
      letGoOfButtons();
      this.send({ t: 'reset' });
    };
    addKeys('blur', release);
    const onHidden = () => document.visibilityState === 'hidden' && release();
    window.addEventListener('blur', release);
    document.addEventListener('visibilitychange', onHidden);
    this.removers.push(() => {
      window.removeEventListener('blur', release);
      document.removeEventListener('visibilitychange', onHidden);
    });
  }

  /** Frame rate, bit rate, round trip, loss and transport from getStats (call about once a second). */
  async stats(): Promise<StreamStats | null> {
    if (!this.pc) return null;
    const report = await this.pc.getStats();
    let fps = 0;
    let bytes = 0;
    let lost = 0;
    let received = 0;
    let rttMs: number | null = null;
    let localId = '';
    const byId = new Map<string, Record<string, unknown>>();
    report.forEach((s: Record<string, unknown>) => {
      byId.set(s.id as string, s);
      if (s.type === 'inbound-rtp' && s.kind === 'video') {
        fps = Number(s.framesPerSecond ?? 0);
        bytes = Number(s.bytesReceived ?? 0);
        lost = Number(s.packetsLost ?? 0);
        received = Number(s.packetsReceived ?? 0);
      }
      if (s.type === 'candidate-pair' && s.state === 'succeeded' && (s.nominated || s.selected)) {
        if (typeof s.currentRoundTripTime === 'number') rttMs = Math.round(s.currentRoundTripTime * 1000);
        localId = String(s.localCandidateId ?? '');
      }
    });
    const now = performance.now();
    const kbps = this.lastAt ? Math.round(((bytes - this.lastBytes) * 8) / Math.max(1, now - this.lastAt)) : 0;
    this.lastBytes = bytes;
    this.lastAt = now;
    const local = byId.get(localId);
    const transport = local ? `${String(local.protocol ?? '')} ${String(local.candidateType ?? '')}`.trim() : '';
    return { fps: Math.round(fps), kbps, rttMs, lossPct: received + lost ? Math.round((1000 * lost) / (received + lost)) / 10 : 0, transport };
  }

  close(): void {
    if (this.pasteTimer) clearTimeout(this.pasteTimer);
    this.removers.forEach((r) => r());
    this.removers = [];
    this.pc?.close();
    this.pc = null;
    this.spare?.close();
    this.spare = null;
    this.dc = null;
    this.video.srcObject = null;
    this.video.remove();
    this.keys.remove();
  }
}
