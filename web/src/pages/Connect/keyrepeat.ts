import { pressAgain } from '@hyperdesk/contract';

type SendKey = (keysym: number, code: string | null, down?: boolean) => void;

/**
 * The VNC view's key sender, around noVNC's `sendKey`:
 * - noVNC sends a press for each keydown the browser repeats: a press of a key already down goes as a release and a
 *   press, a held modifier's repeat not at all (`pressAgain`, contract/src/keys.ts);
 * - a key's release goes the way its press went. noVNC sends a key with its scancode (QEMU's extended key event) once
 *   the server has said it takes them (`extended()`), by its keysym alone before. The server knows a key by one or the
 *   other: a key pressed by keysym just before that word came and released by scancode stayed down in Xvnc, and X
 *   dropped the next press of it (a letter lost from the first line typed after connecting). `code` null sends the
 *   keysym alone.
 */
export function repeatsAsPresses(send: SendKey, extended: () => boolean): SendKey {
  const down = new Map<string, number>(); // code (or keysym, for keys without one) -> the keysym pressed
  const sentWith = new Map<string, string | null>(); // the same key -> the code its press was sent with
  const release = (key: string, keysym: number, code: string | null) => {
    const how = sentWith.has(key) ? sentWith.get(key)! : code;
    sentWith.delete(key);
    send(keysym, how, false);
  };
  return (keysym, code, pressed) => {
    const key = code ?? `keysym ${keysym}`;
    if (pressed === true) {
      for (const k of pressAgain(down, key, keysym)) {
        if (!k.down) release(key, k.keysym, code);
        else {
          const how = extended() ? code : null;
          sentWith.set(key, how);
          send(k.keysym, how, true);
        }
      }
      return;
    }
    if (pressed === false) {
      down.delete(key);
      return release(key, keysym, code);
    }
    send(keysym, code, pressed);
  };
}
