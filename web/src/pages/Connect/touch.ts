/**
 * Touch input for the WebRTC view: fingers on the picture become the desktop's mouse, as a phone or tablet user
 * expects of a remote desktop (noVNC has its own gestures for the VNC view).
 *
 * - tap: a left click where the finger was (a second tap close by within a moment lands on the first one's spot,
 *   so a double tap is a double click to the desktop);
 * - drag with one finger: the left button held while the pointer follows the finger;
 * - long press: a right click;
 * - two fingers moving together: the wheel (natural scrolling: fingers up scroll the content down), a two-finger
 *   tap: a right click.
 *
 * `TouchGestures` is the pure part (tested in web/test); `bindTouch` feeds it the element's touch events.
 */

export interface TouchPoint {
  id: number;
  x: number;
  y: number;
}

export type PointerAction =
  | { t: 'm'; x: number; y: number }
  | { t: 'b'; b: 1 | 3; d: boolean }
  | { t: 'w'; dx: number; dy: number };

/** A finger that moves less than this (CSS px) is still a tap or a long press. */
export const TAP_SLOP_PX = 10;
/** A finger held still this long is a right click. */
export const LONG_PRESS_MS = 550;
/** Two fingers moving this far (CSS px) are one wheel step. */
export const SCROLL_STEP_PX = 24;
/** A tap this soon and this close to the previous one clicks on the same spot (double click). */
export const DOUBLE_TAP_MS = 400;
export const DOUBLE_TAP_PX = 24;

type State =
  | { kind: 'idle' }
  /** One finger down, not yet a drag or a long press. */
  | { kind: 'pending'; id: number; x: number; y: number; at: number }
  | { kind: 'drag'; id: number }
  /** Two fingers: `moved` once they scrolled; `x`, `y` the midpoint at the last wheel step. */
  | { kind: 'two'; x: number; y: number; moved: boolean; startX: number; startY: number }
  /** The gesture is over (a long press, a tap of two fingers): the rest of it is ignored until every finger is up. */
  | { kind: 'done' };

const mid = (ts: TouchPoint[]) => ({ x: (ts[0]!.x + ts[1]!.x) / 2, y: (ts[0]!.y + ts[1]!.y) / 2 });
const far = (ax: number, ay: number, bx: number, by: number, d: number) => Math.hypot(ax - bx, ay - by) > d;

export class TouchGestures {
  private state: State = { kind: 'idle' };
  private lastTap: { x: number; y: number; at: number } | null = null;

  /** Fingers touching the screen now (`touches`), at time `now` (ms). */
  start(touches: TouchPoint[], now: number): PointerAction[] {
    const s = this.state;
    if (touches.length === 1 && s.kind === 'idle') {
      const t = touches[0]!;
      this.state = { kind: 'pending', id: t.id, x: t.x, y: t.y, at: now };
    } else if (touches.length === 2 && (s.kind === 'pending' || s.kind === 'idle')) {
      const m = mid(touches);
      this.state = { kind: 'two', x: m.x, y: m.y, startX: m.x, startY: m.y, moved: false };
    } else if (s.kind === 'two' || s.kind === 'pending') {
      this.state = { kind: 'done' }; // three fingers: not ours
    }
    return [];
  }

  move(touches: TouchPoint[], _now: number): PointerAction[] {
    const s = this.state;
    if (s.kind === 'pending') {
      const t = touches.find((p) => p.id === s.id);
      if (!t || !far(t.x, t.y, s.x, s.y, TAP_SLOP_PX)) return [];
      this.state = { kind: 'drag', id: s.id };
      return [{ t: 'm', x: s.x, y: s.y }, { t: 'b', b: 1, d: true }, { t: 'm', x: t.x, y: t.y }];
    }
    if (s.kind === 'drag') {
      const t = touches.find((p) => p.id === s.id);
      return t ? [{ t: 'm', x: t.x, y: t.y }] : [];
    }
    if (s.kind === 'two' && touches.length >= 2) {
      const m = mid(touches);
      if (!s.moved && !far(m.x, m.y, s.startX, s.startY, TAP_SLOP_PX)) return [];
      s.moved = true;
      const out: PointerAction[] = [];
      // Whole steps only; the rest waits for the next move. Fingers going up (y falls) scroll the content down.
      const stepsY = Math.trunc((s.y - m.y) / SCROLL_STEP_PX);
      const stepsX = Math.trunc((s.x - m.x) / SCROLL_STEP_PX);
      for (let i = 0; i < Math.max(Math.abs(stepsY), Math.abs(stepsX)); i++) {
        out.push({ t: 'w', dy: i < Math.abs(stepsY) ? Math.sign(stepsY) : 0, dx: i < Math.abs(stepsX) ? Math.sign(stepsX) : 0 });
      }
      s.y -= stepsY * SCROLL_STEP_PX;
      s.x -= stepsX * SCROLL_STEP_PX;
      return out;
    }
    return [];
  }

  /** Fingers lifted: `ended` are the ones that left, `remaining` those still down. */
  end(ended: TouchPoint[], remaining: TouchPoint[], now: number): PointerAction[] {
    const s = this.state;
    let out: PointerAction[] = [];
    if (s.kind === 'pending') {
      const t = ended.find((p) => p.id === s.id);
      if (t) out = this.tap(s.x, s.y, now);
      this.state = remaining.length ? { kind: 'done' } : { kind: 'idle' };
      return out;
    }
    if (s.kind === 'drag') {
      const t = ended.find((p) => p.id === s.id);
      if (t) {
        out = [{ t: 'm', x: t.x, y: t.y }, { t: 'b', b: 1, d: false }];
        this.state = { kind: 'done' };
      }
    } else if (s.kind === 'two' && !s.moved) {
      // A tap of two fingers: a right click at their midpoint.
      out = [{ t: 'm', x: s.startX, y: s.startY }, { t: 'b', b: 3, d: true }, { t: 'b', b: 3, d: false }];
      this.state = { kind: 'done' };
    } else if (s.kind === 'two') {
      this.state = { kind: 'done' };
    }
    if (!remaining.length) this.state = { kind: 'idle' };
    return out;
  }

  /** The system took the touch (a call, a gesture of the OS): a held button is let go, nothing else is sent. */
  cancel(): PointerAction[] {
    const held = this.state.kind === 'drag';
    this.state = { kind: 'idle' };
    return held ? [{ t: 'b', b: 1, d: false }] : [];
  }

  /** Called LONG_PRESS_MS after a finger went down: a finger still held there is a right click. */
  tick(now: number): PointerAction[] {
    const s = this.state;
    if (s.kind !== 'pending' || now - s.at < LONG_PRESS_MS) return [];
    this.state = { kind: 'done' };
    this.lastTap = null;
    return [{ t: 'm', x: s.x, y: s.y }, { t: 'b', b: 3, d: true }, { t: 'b', b: 3, d: false }];
  }

  private tap(x: number, y: number, now: number): PointerAction[] {
    const last = this.lastTap;
    if (last && now - last.at <= DOUBLE_TAP_MS && !far(x, y, last.x, last.y, DOUBLE_TAP_PX)) {
      x = last.x;
      y = last.y;
    }
    this.lastTap = { x, y, at: now };
    return [{ t: 'm', x, y }, { t: 'b', b: 1, d: true }, { t: 'b', b: 1, d: false }];
  }
}

const points = (list: TouchList): TouchPoint[] => Array.from(list, (t) => ({ id: t.identifier, x: t.clientX, y: t.clientY }));

/**
 * Touch on `el` drives the desktop's pointer: `point` maps a place in the window to the desktop's pixels (null
 * before the first frame), `send` sends an input event. The browser's own reactions (scrolling, zooming, the
 * mouse events it makes up after a tap) are prevented. Answers a function that unbinds.
 */
export function bindTouch(
  el: HTMLElement,
  point: (p: { clientX: number; clientY: number }) => { x: number; y: number } | null,
  send: (msg: Record<string, unknown>) => void,
): () => void {
  const g = new TouchGestures();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const run = (actions: PointerAction[]) => {
    for (const a of actions) {
      if (a.t !== 'm') send(a);
      else {
        const p = point({ clientX: a.x, clientY: a.y });
        if (p) send({ t: 'm', ...p });
      }
    }
  };
  const onStart = (e: TouchEvent) => {
    e.preventDefault();
    run(g.start(points(e.touches), performance.now()));
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => run(g.tick(performance.now())), LONG_PRESS_MS);
  };
  const onMove = (e: TouchEvent) => {
    e.preventDefault();
    run(g.move(points(e.touches), performance.now()));
  };
  const onEnd = (e: TouchEvent) => {
    e.preventDefault();
    run(g.end(points(e.changedTouches), points(e.touches), performance.now()));
  };
  const onCancel = () => run(g.cancel());
  const opts = { passive: false } as const;
  el.addEventListener('touchstart', onStart, opts);
  el.addEventListener('touchmove', onMove, opts);
  el.addEventListener('touchend', onEnd, opts);
  el.addEventListener('touchcancel', onCancel);
  const touchAction = el.style.touchAction;
  el.style.touchAction = 'none';
  return () => {
    if (timer) clearTimeout(timer);
    el.removeEventListener('touchstart', onStart);
    el.removeEventListener('touchmove', onMove);
    el.removeEventListener('touchend', onEnd);
    el.removeEventListener('touchcancel', onCancel);
    el.style.touchAction = touchAction;
  };
}
