import { pressAgain } from '@hyperdesk/contract';

type SendKey = (keysym: number, code: string | null, down?: boolean) => void;

/**
 * The VNC view's key sender (noVNC sends a press for each keydown the browser repeats): a press of a key already
 * down goes as a release and a press, a held modifier's repeat not at all (`pressAgain`, contract/src/keys.ts).
 */
export function repeatsAsPresses(send: SendKey): SendKey {
  const down = new Map<string, number>(); // code (or keysym, for keys without one) -> the keysym pressed
  return (keysym, code, pressed) => {
    const key = code ?? `keysym ${keysym}`;
    if (pressed === true) {
      for (const k of pressAgain(down, key, keysym)) send(k.keysym, code, k.down);
      return;
    }
    if (pressed === false) down.delete(key);
    send(keysym, code, pressed);
  };
}
