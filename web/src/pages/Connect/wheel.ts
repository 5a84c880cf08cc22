/** Wheel movement (CSS px) that makes one notch, and a line's px for wheels that count lines: the VNC view's (noVNC's)
 *  values, so both views scroll alike. */
export const WHEEL_STEP_PX = 50;
const LINE_PX = 19;

/**
 * The WebRTC view's wheel: the desktop's X takes the wheel as notches (buttons 4–7), while a trackpad or a smooth
 * wheel sends many small movements (a few px each, 60 a second). Each axis adds up its movement and makes a notch once
 * it reaches WHEEL_STEP_PX; a mouse's notch (50–120 px in one event) stays one notch. Answers the notches an event
 * makes, or null.
 */
export function wheelNotches(): (e: Pick<WheelEvent, 'deltaX' | 'deltaY' | 'deltaMode'>) => { dx: number; dy: number } | null {
  let x = 0;
  let y = 0;
  return (e) => {
    const scale = e.deltaMode === 0 ? 1 : LINE_PX;
    x += e.deltaX * scale;
    y += e.deltaY * scale;
    const dx = Math.abs(x) >= WHEEL_STEP_PX ? Math.sign(x) : 0;
    const dy = Math.abs(y) >= WHEEL_STEP_PX ? Math.sign(y) : 0;
    if (dx) x = 0;
    if (dy) y = 0;
    return dx || dy ? { dx, dy } : null;
  };
}
