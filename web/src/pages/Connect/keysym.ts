/** X keysyms of browser keyboard events, for the WebRTC input channel (noVNC keeps its own table private), and the keyboard field both views type into. */

const NAMED: Record<string, number> = {
  Backspace: 0xff08, Tab: 0xff09, Enter: 0xff0d, Escape: 0xff1b, Delete: 0xffff, Home: 0xff50, End: 0xff57,
  PageUp: 0xff55, PageDown: 0xff56, ArrowLeft: 0xff51, ArrowUp: 0xff52, ArrowRight: 0xff53, ArrowDown: 0xff54,
  Insert: 0xff63, CapsLock: 0xffe5, ContextMenu: 0xff67, Pause: 0xff13, ScrollLock: 0xff14, PrintScreen: 0xff61,
  NumLock: 0xff7f, AltGraph: 0xfe03,
};
const LEFT_RIGHT: Record<string, [number, number]> = {
  Shift: [0xffe1, 0xffe2], Control: [0xffe3, 0xffe4], Alt: [0xffe9, 0xffea], Meta: [0xffeb, 0xffec], OS: [0xffeb, 0xffec],
};

/** The X button of a mouse button (MouseEvent.button): left, middle, right, and back and forward as X's 8 and 9 (which
 *  the desktop's browsers and file managers take for back and forward); null for any other. */
export function xButtonOf(button: number): number | null {
  return [1, 2, 3, 8, 9][button] ?? null;
}

/** The browser's paste shortcuts: Ctrl+V (Ctrl+Shift+V too) and Shift+Insert. */
export function isPasteKey(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'shiftKey' | 'altKey' | 'metaKey'>): boolean {
  if (e.altKey || e.metaKey) return false;
  return (e.ctrlKey && e.key.toLowerCase() === 'v') || (e.shiftKey && !e.ctrlKey && e.key === 'Insert');
}

export function keysymOf(e: Pick<KeyboardEvent, 'key' | 'code'>): number | null {
  const lr = LEFT_RIGHT[e.key];
  if (lr) return e.code.endsWith('Right') ? lr[1] : lr[0];
  const named = NAMED[e.key];
  if (named) return named;
  const f = /^F([1-9]|1[0-2])$/.exec(e.key);
  if (f) return 0xffbe + Number(f[1]) - 1;
  const chars = [...e.key];
  if (chars.length !== 1) return null;
  const cp = chars[0]?.codePointAt(0) ?? 0;
  // Latin-1 keysyms equal the code point; the rest of Unicode is 0x01000000 + code point.
  return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) ? cp : 0x01000000 + cp;
}

/**
 * The invisible text field that takes the desktop's keyboard (keys, and text without key events: IME, compose,
 * dictation, an on-screen keyboard), over the view's top left corner (an IME shows its candidates there) and never
 * in the way of the mouse.
 */
export function keyField(target: HTMLElement): HTMLTextAreaElement {
  const k = document.createElement('textarea');
  k.dataset.testid = 'desktop-keys';
  k.setAttribute('aria-label', 'Keyboard input for the desktop');
  k.autocomplete = 'off';
  k.spellcheck = false;
  k.setAttribute('autocapitalize', 'off');
  k.setAttribute('autocorrect', 'off');
  k.style.cssText = 'position:absolute;left:0;top:0;width:1px;height:1px;opacity:0;pointer-events:none;resize:none;border:0;padding:0;overflow:hidden';
  target.appendChild(k);
  return k;
}
