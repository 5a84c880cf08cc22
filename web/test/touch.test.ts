import { describe, expect, it } from 'vitest';
import { DOUBLE_TAP_MS, LONG_PRESS_MS, SCROLL_STEP_PX, TouchGestures, type TouchPoint } from '../src/pages/Connect/touch';

const f = (id: number, x: number, y: number): TouchPoint => ({ id, x, y });

describe('touch gestures on the WebRTC desktop', () => {
  it('a tap is a left click where the finger was (a small wobble is still a tap)', () => {
    const g = new TouchGestures();
    expect(g.start([f(1, 100, 200)], 0)).toEqual([]);
    expect(g.move([f(1, 104, 203)], 50)).toEqual([]);
    expect(g.end([f(1, 104, 203)], [], 120)).toEqual([
      { t: 'm', x: 100, y: 200 },
      { t: 'b', b: 1, d: true },
      { t: 'b', b: 1, d: false },
    ]);
    // The long-press timer of that finger fires after it was lifted: nothing.
    expect(g.tick(LONG_PRESS_MS)).toEqual([]);
  });

  it('a second tap close by lands on the first one, so the desktop sees a double click; a later or farther one does not', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 200)], 0);
    g.end([f(1, 100, 200)], [], 80);
    g.start([f(2, 108, 210)], 200);
    expect(g.end([f(2, 108, 210)], [], 260)[0]).toEqual({ t: 'm', x: 100, y: 200 });
    g.start([f(3, 108, 210)], 260 + DOUBLE_TAP_MS + 1);
    expect(g.end([f(3, 108, 210)], [], 260 + DOUBLE_TAP_MS + 60)[0]).toEqual({ t: 'm', x: 108, y: 210 });
    g.start([f(4, 300, 210)], 2000);
    expect(g.end([f(4, 300, 210)], [], 2050)[0]).toEqual({ t: 'm', x: 300, y: 210 });
  });

  it('a drag holds the left button from where the finger went down to where it leaves', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 100)], 0);
    expect(g.move([f(1, 130, 110)], 30)).toEqual([
      { t: 'm', x: 100, y: 100 },
      { t: 'b', b: 1, d: true },
      { t: 'm', x: 130, y: 110 },
    ]);
    expect(g.move([f(1, 180, 140)], 60)).toEqual([{ t: 'm', x: 180, y: 140 }]);
    // Held still past the long-press time while dragging: still a drag, no right click.
    expect(g.tick(LONG_PRESS_MS + 10)).toEqual([]);
    expect(g.end([f(1, 200, 150)], [], 900)).toEqual([{ t: 'm', x: 200, y: 150 }, { t: 'b', b: 1, d: false }]);
  });

  it('a cancelled drag lets go of the button', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 100)], 0);
    g.move([f(1, 150, 100)], 10);
    expect(g.cancel()).toEqual([{ t: 'b', b: 1, d: false }]);
    expect(g.cancel()).toEqual([]);
  });

  it('a long press is a right click, and lifting the finger afterwards clicks nothing more', () => {
    const g = new TouchGestures();
    g.start([f(1, 50, 60)], 1000);
    expect(g.tick(1000 + LONG_PRESS_MS - 1)).toEqual([]);
    expect(g.tick(1000 + LONG_PRESS_MS)).toEqual([
      { t: 'm', x: 50, y: 60 },
      { t: 'b', b: 3, d: true },
      { t: 'b', b: 3, d: false },
    ]);
    expect(g.move([f(1, 90, 90)], 1700)).toEqual([]);
    expect(g.end([f(1, 90, 90)], [], 1800)).toEqual([]);
  });

  it('two fingers moving up scroll the content down one wheel step per step of travel, down scroll it up', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 300)], 0);
    g.start([f(1, 100, 300), f(2, 200, 300)], 20);
    // Within the slop: nothing yet.
    expect(g.move([f(1, 100, 295), f(2, 200, 295)], 30)).toEqual([]);
    // 2.5 steps up: two wheel-down steps, the half step waits.
    const up = g.move([f(1, 100, 300 - 2.5 * SCROLL_STEP_PX), f(2, 200, 300 - 2.5 * SCROLL_STEP_PX)], 60);
    expect(up).toEqual([{ t: 'w', dy: 1, dx: 0 }, { t: 'w', dy: 1, dx: 0 }]);
    expect(g.move([f(1, 100, 300 - 3 * SCROLL_STEP_PX), f(2, 200, 300 - 3 * SCROLL_STEP_PX)], 80)).toEqual([{ t: 'w', dy: 1, dx: 0 }]);
    // Back down by 2 steps: two wheel-up steps.
    expect(g.move([f(1, 100, 300 - SCROLL_STEP_PX), f(2, 200, 300 - SCROLL_STEP_PX)], 100)).toEqual([{ t: 'w', dy: -1, dx: 0 }, { t: 'w', dy: -1, dx: 0 }]);
    // Sideways: dx.
    expect(g.move([f(1, 100 - SCROLL_STEP_PX, 300 - SCROLL_STEP_PX), f(2, 200 - SCROLL_STEP_PX, 300 - SCROLL_STEP_PX)], 120)).toEqual([{ t: 'w', dy: 0, dx: 1 }]);
    // Lifting the fingers clicks nothing, and the first finger never becomes a long press.
    expect(g.end([f(2, 200, 276)], [f(1, 100, 276)], 200)).toEqual([]);
    expect(g.tick(LONG_PRESS_MS)).toEqual([]);
    expect(g.end([f(1, 100, 276)], [], 220)).toEqual([]);
    // The next touch starts afresh.
    g.start([f(3, 10, 10)], 1000);
    expect(g.end([f(3, 10, 10)], [], 1050)).toHaveLength(3);
  });

  it('two fingers that land in the same instant scroll too', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 300), f(2, 200, 300)], 0);
    expect(g.move([f(1, 100, 300 + SCROLL_STEP_PX + 1), f(2, 200, 300 + SCROLL_STEP_PX + 1)], 30)).toEqual([{ t: 'w', dy: -1, dx: 0 }]);
    expect(g.end([f(1, 100, 325), f(2, 200, 325)], [], 60)).toEqual([]);
  });

  it('a tap of two fingers is a right click at their midpoint', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 100)], 0);
    g.start([f(1, 100, 100), f(2, 140, 120)], 30);
    expect(g.end([f(1, 100, 100)], [f(2, 140, 120)], 100)).toEqual([
      { t: 'm', x: 120, y: 110 },
      { t: 'b', b: 3, d: true },
      { t: 'b', b: 3, d: false },
    ]);
    expect(g.end([f(2, 140, 120)], [], 110)).toEqual([]);
  });

  it('a second finger during a drag is ignored, and three fingers are not a gesture', () => {
    const g = new TouchGestures();
    g.start([f(1, 100, 100)], 0);
    g.move([f(1, 150, 100)], 10);
    expect(g.start([f(1, 150, 100), f(2, 300, 300)], 20)).toEqual([]);
    expect(g.move([f(1, 160, 100), f(2, 300, 250)], 30)).toEqual([{ t: 'm', x: 160, y: 100 }]);
    expect(g.end([f(1, 160, 100)], [f(2, 300, 250)], 40)).toEqual([{ t: 'm', x: 160, y: 100 }, { t: 'b', b: 1, d: false }]);
    expect(g.end([f(2, 300, 250)], [], 50)).toEqual([]);

    g.start([f(1, 0, 0)], 100);
    g.start([f(1, 0, 0), f(2, 50, 0)], 110);
    g.start([f(1, 0, 0), f(2, 50, 0), f(3, 100, 0)], 120);
    expect(g.move([f(1, 0, 100), f(2, 50, 100), f(3, 100, 100)], 130)).toEqual([]);
    expect(g.end([f(1, 0, 100), f(2, 50, 100), f(3, 100, 100)], [], 140)).toEqual([]);
  });
});
