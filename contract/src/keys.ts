/**
 * The desktop's X has no key auto-repeat of its own (a key-up late on a slow link made it repeat keys by itself:
 * machine-image/desktop-session.sh), and it drops a second press of a key that is down. A key the viewer's browser
 * repeats therefore goes to it as X's own repeat would: a release, then the press; a modifier's repeat is dropped, as X
 * never repeats those. The agent does this for the WebRTC view (server/agent/xinput.py), the VNC view's key sender and
 * the instructor's take-over for theirs.
 */

/** Shift..Hyper (with Caps Lock and Shift Lock), AltGr (ISO_Level3_Shift), Mode_switch, Num Lock. */
const MODIFIERS = new Set([...Array.from({ length: 14 }, (_, i) => 0xffe1 + i), 0xfe03, 0xff7e, 0xff7f]);

export function isModifierKeysym(keysym: number): boolean {
  return MODIFIERS.has(keysym);
}

/**
 * Which keysyms to send for a press of `key` (`keysym`) while `down` holds what each key pressed: [] for a held
 * modifier's repeat, [the held keysym's release, then this press] for another repeat, [this press] otherwise.
 * Updates `down`.
 */
export function pressAgain<K>(down: Map<K, number>, key: K, keysym: number): Array<{ keysym: number; down: boolean }> {
  const held = down.get(key);
  if (held !== undefined && isModifierKeysym(held)) return [];
  down.set(key, keysym);
  const press = { keysym, down: true };
  return held === undefined ? [press] : [{ keysym: held, down: false }, press];
}
