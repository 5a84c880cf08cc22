import { isPasteKey, keysymOf } from './keysym';

const CONTROL_L = 0xffe3;
const SHIFT_L = 0xffe1;
const MODIFIER_CODE: Record<number, string> = { [CONTROL_L]: 'ControlLeft', [SHIFT_L]: 'ShiftLeft' };

export type PasteKeyEvent = Pick<KeyboardEvent, 'key' | 'code' | 'ctrlKey' | 'shiftKey' | 'altKey' | 'metaKey' | 'repeat'>;

/** Where VncPasteKeys reads and sends: the local clipboard, the desktop's clipboard and its keyboard (noVNC). */
export interface PasteSink {
  /** This computer's clipboard text (the Clipboard API: the browser asks the user once); rejects when refused. */
  read(): Promise<string>;
  paste(text: string): void;
  key(keysym: number, code: string, down: boolean): void;
}

interface Pending {
  keysym: number;
  ctrl: boolean;
  shift: boolean;
  sent: boolean;
  up: boolean;
}

/**
 * Ctrl+V, Ctrl+Shift+V and Shift+Insert in the VNC view paste this computer's clipboard, as they do in the WebRTC
 * view. noVNC takes keys on its canvas, where the browser fires no paste event, so the text is read through the
 * Clipboard API, becomes the desktop's clipboard, and only then does the key go (the desktop's program pastes what is
 * there). Refused or empty: the key goes alone and the desktop pastes its own clipboard (the Clipboard panel is the
 * way in then). A chord whose modifier was let go while the browser asked is sent whole, modifier included.
 * DOM-free: attachVncPaste (./desktop) feeds it the view's key events.
 */
export class VncPasteKeys {
  private readonly pending = new Map<string, Pending>();
  private ctrl = false;
  private shift = false;

  constructor(private readonly sink: PasteSink) {}

  /** A key went down: true when it is a paste key taken over here (the caller keeps it from noVNC). */
  down(e: PasteKeyEvent): boolean {
    this.modifiers(e);
    if (this.pending.has(e.code)) return true; // its auto-repeat
    if (!isPasteKey(e)) return false;
    const keysym = keysymOf(e);
    if (keysym === null) return false;
    const p: Pending = { keysym, ctrl: e.ctrlKey, shift: e.shiftKey, sent: false, up: false };
    this.pending.set(e.code, p);
    const send = () => this.send(e.code, p);
    this.sink.read().then((text) => {
      if (text) this.sink.paste(text);
    }, () => undefined).then(send, send);
    return true;
  }

  /** A key came up: true when it is a paste key taken over here. */
  up(e: PasteKeyEvent): boolean {
    this.modifiers(e);
    const p = this.pending.get(e.code);
    if (!p) return false;
    if (p.sent) {
      this.pending.delete(e.code);
      this.sink.key(p.keysym, e.code, false);
    } else {
      p.up = true;
    }
    return true;
  }

  /** The view lost the keyboard: a paste key sent down goes up (noVNC lets go of its own keys). */
  releaseAll(): void {
    for (const [code, p] of this.pending) if (p.sent) this.sink.key(p.keysym, code, false);
    for (const [code, p] of this.pending) if (p.sent) this.pending.delete(code);
    this.ctrl = false;
    this.shift = false;
  }

  private modifiers(e: PasteKeyEvent): void {
    this.ctrl = e.ctrlKey;
    this.shift = e.shiftKey;
  }

  private send(code: string, p: Pending): void {
    if (this.pending.get(code) !== p) return;
    // Modifiers the chord had that are no longer held (noVNC sent their release) go down and up around the key.
    const around = [...(p.ctrl && !this.ctrl ? [CONTROL_L] : []), ...(p.shift && !this.shift ? [SHIFT_L] : [])];
    for (const m of around) this.sink.key(m, MODIFIER_CODE[m]!, true);
    this.sink.key(p.keysym, code, true);
    p.sent = true;
    if (p.up || around.length) {
      this.pending.delete(code);
      this.sink.key(p.keysym, code, false);
    }
    for (const m of around.reverse()) this.sink.key(m, MODIFIER_CODE[m]!, false);
  }
}
