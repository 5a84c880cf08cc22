import type RFB from '@novnc/novnc';
import { keyField, keysymOf } from './keysym';
import { VncPasteKeys } from './vncpaste';

/**
 * A text field for the VNC view's on-screen keyboard: noVNC listens for keys on its canvas, which a phone does not
 * open its keyboard for. The field (invisible, like the WebRTC view's) takes the focus from the toolbar's Keyboard
 * button; its keys and its text (on-screen keyboards mostly send text, not keys) go to the desktop through noVNC.
 */
export function vncKeyboardField(target: HTMLElement, rfb: RFB): { focus(): void; remove(): void } {
  const k = keyField(target);
  const held = new Map<string, number>();
  k.addEventListener('keydown', (e) => {
    const s = keysymOf(e);
    if (s === null || e.isComposing) return;
    e.preventDefault();
    held.set(e.code, s);
    rfb.sendKey(s, e.code, true);
  });
  k.addEventListener('keyup', (e) => {
    const s = held.get(e.code) ?? keysymOf(e);
    held.delete(e.code);
    if (s === null) return;
    e.preventDefault();
    rfb.sendKey(s, e.code, false);
  });
  const type = (text: string) => {
    for (const ch of text.replace(/\r\n?/g, '\n')) {
      const s = ch === '\n' ? 0xff0d : keysymOf({ key: ch, code: '' });
      if (s !== null) rfb.sendKey(s, null);
    }
  };
  k.addEventListener('input', (e) => {
    const ie = e as InputEvent;
    if (ie.inputType === 'insertCompositionText' || ie.isComposing) return;
    if (ie.inputType === 'deleteContentBackward') rfb.sendKey(0xff08, 'Backspace');
    else if (ie.inputType === 'insertLineBreak') rfb.sendKey(0xff0d, 'Enter');
    else if (ie.inputType.startsWith('insert')) type(ie.data ?? ie.dataTransfer?.getData('text/plain') ?? '');
    k.value = '';
  });
  k.addEventListener('compositionend', (e) => {
    type(e.data);
    k.value = '';
  });
  k.addEventListener('blur', () => {
    for (const [code, s] of held) rfb.sendKey(s, code, false);
    held.clear();
  });
  return { focus: () => k.focus({ preventScroll: true }), remove: () => k.remove() };
}

/**
 * Paste keys in the VNC view (./vncpaste): capture-phase listeners on the view, so a Ctrl+V on noVNC's canvas or on
 * the keyboard field goes through VncPasteKeys and never reaches noVNC, whose own key handling continues for the
 * rest. Answers the remover.
 */
export function attachVncPaste(target: HTMLElement, rfb: RFB): () => void {
  const paste = new VncPasteKeys({
    read: () => (navigator.clipboard?.readText ? navigator.clipboard.readText() : Promise.reject(new Error('no Clipboard API'))),
    paste: (text) => rfb.clipboardPasteFrom(text),
    key: (keysym, code, down) => rfb.sendKey(keysym, code, down),
  });
  const ours = (e: Event) => e.target instanceof HTMLCanvasElement || (e.target instanceof HTMLElement && e.target.dataset.testid === 'desktop-keys');
  const take = (handled: boolean, e: KeyboardEvent) => {
    if (!handled) return;
    e.preventDefault();
    e.stopPropagation();
  };
  const down = (e: KeyboardEvent) => ours(e) && take(paste.down(e), e);
  const up = (e: KeyboardEvent) => ours(e) && take(paste.up(e), e);
  const out = () => paste.releaseAll();
  target.addEventListener('keydown', down, true);
  target.addEventListener('keyup', up, true);
  target.addEventListener('focusout', out, true);
  return () => {
    target.removeEventListener('keydown', down, true);
    target.removeEventListener('keyup', up, true);
    target.removeEventListener('focusout', out, true);
  };
}
