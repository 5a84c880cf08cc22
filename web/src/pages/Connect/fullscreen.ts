import { useCallback, useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';

/** How long the "how to leave" note stays after entering full screen. */
const HINT_MS = 4000;
/** The toolbar slides away this long after the mouse leaves it (a slip past its edge does not hide it). */
const HIDE_DELAY_MS = 700;

/** The Keyboard Lock API (Chrome, Edge; not in TypeScript's DOM types): in full screen, system keys go to the page. */
interface KeyboardLock {
  lock?(codes?: string[]): Promise<void>;
  unlock?(): void;
}
const keyboardApi = (): KeyboardLock | undefined => (navigator as Navigator & { keyboard?: KeyboardLock }).keyboard;

export interface FullScreen {
  fullScreen: boolean;
  /** Whether the toolbar shows: always outside full screen; in full screen only when called up. */
  toolbarShown: boolean;
  /** Esc, Alt+Tab, Ctrl+W… go to the desktop (the Keyboard Lock API took them); leaving takes holding Esc. */
  keyboardLocked: boolean;
  /** The note saying how to leave full screen and how to call the toolbar, shown for a moment after entering. */
  hint: boolean;
  toggle(): void;
  showToolbar(): void;
}

/**
 * Full screen of the connect tab (`root`, the whole page) with a toolbar that gets out of the way: in full screen it
 * hides, comes back when the mouse reaches the top edge or a finger taps there (the page's reveal strip calls
 * `showToolbar`), and hides again when the mouse leaves it or a finger touches the desktop. Where the browser has
 * the Keyboard Lock API, system keys go to the desktop while in full screen.
 */
export function useFullScreen(root: RefObject<HTMLElement | null>, toolbar: RefObject<HTMLElement | null>, afterToggle: () => void): FullScreen {
  const [fullScreen, setFullScreen] = useState(false);
  const [toolbarShown, setToolbarShown] = useState(true);
  const [keyboardLocked, setKeyboardLocked] = useState(false);
  const [hint, setHint] = useState(false);
  const hideTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const cancelHide = useCallback(() => {
    if (hideTimer.current) clearTimeout(hideTimer.current);
    hideTimer.current = null;
  }, []);

  useEffect(() => {
    const onChange = () => {
      const on = !!root.current && document.fullscreenElement === root.current;
      setFullScreen(on);
      setToolbarShown(!on);
      setKeyboardLocked(false);
      if (!on) {
        setHint(false);
        return keyboardApi()?.unlock?.();
      }
      // Only a page in full screen may lock the keyboard (Chrome refuses otherwise). The note waits for the answer:
      // it says how to leave, which depends on it.
      const lock = keyboardApi()?.lock?.();
      if (!lock) return setHint(true);
      void lock.then(
        () => document.fullscreenElement === root.current && setKeyboardLocked(true),
        () => undefined,
      ).finally(() => setHint(document.fullscreenElement === root.current));
    };
    document.addEventListener('fullscreenchange', onChange);
    return () => {
      document.removeEventListener('fullscreenchange', onChange);
      if (hideTimer.current) clearTimeout(hideTimer.current);
    };
  }, [root]);

  useEffect(() => {
    if (!hint) return;
    const t = setTimeout(() => setHint(false), HINT_MS);
    return () => clearTimeout(t);
  }, [hint]);

  // In full screen with the toolbar called up: the mouse moving off it sends it away after a moment (back on it in
  // time: it stays), a touch anywhere else at once. (Document listeners: a toolbar that appeared under a pointer
  // that did not move may never have seen it enter. A layout effect: they are on before the toolbar is painted, so
  // the first move after it shows counts; a passive effect ran later, and a single move in between was lost.)
  useLayoutEffect(() => {
    if (!fullScreen || !toolbarShown) return;
    const inside = (e: Event) => !!toolbar.current?.contains(e.target as Node);
    const onMove = (e: PointerEvent) => {
      if (e.pointerType !== 'mouse') return;
      if (inside(e)) return cancelHide();
      hideTimer.current ??= setTimeout(() => {
        hideTimer.current = null;
        setToolbarShown(false);
      }, HIDE_DELAY_MS);
    };
    const onDown = (e: PointerEvent) => {
      if (e.pointerType !== 'mouse' && !inside(e)) setToolbarShown(false);
    };
    document.addEventListener('pointermove', onMove, true);
    document.addEventListener('pointerdown', onDown, true);
    return () => {
      cancelHide();
      document.removeEventListener('pointermove', onMove, true);
      document.removeEventListener('pointerdown', onDown, true);
    };
  }, [fullScreen, toolbarShown, toolbar, cancelHide]);

  const toggle = useCallback(() => {
    if (document.fullscreenElement) void document.exitFullscreen().catch(() => undefined);
    else void root.current?.requestFullscreen().catch(() => undefined);
    afterToggle();
  }, [root, afterToggle]);

  const showToolbar = useCallback(() => {
    cancelHide();
    setToolbarShown(true);
    setHint(false); // the note would sit under the toolbar; whoever called it knows the way
  }, [cancelHide]);

  return { fullScreen, toolbarShown, keyboardLocked, hint, toggle, showToolbar };
}
