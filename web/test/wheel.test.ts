import { describe, expect, it } from 'vitest';
import { wheelNotches } from '../src/pages/Connect/wheel';

const px = (deltaY: number, deltaX = 0) => ({ deltaX, deltaY, deltaMode: 0 });

describe('the WebRTC view turns wheel movement into notches', () => {
  it("a mouse's notch is one notch, each way", () => {
    const wheel = wheelNotches();
    expect(wheel(px(100))).toEqual({ dx: 0, dy: 1 });
    expect(wheel(px(-53))).toEqual({ dx: 0, dy: -1 });
    expect(wheel(px(0, 120))).toEqual({ dx: 1, dy: 0 });
  });

  it("a trackpad's small movements add up: 60 events of 4 px make 4 notches, not 60", () => {
    const wheel = wheelNotches();
    const notches = Array.from({ length: 60 }, () => wheel(px(4))).filter((n) => n !== null);
    expect(notches).toHaveLength(4);
    expect(notches.every((n) => n!.dy === 1 && n!.dx === 0)).toBe(true);
  });

  it('lines count as 19 px; a change of direction starts from what was left', () => {
    const wheel = wheelNotches();
    expect(wheel({ deltaX: 0, deltaY: 1, deltaMode: 1 })).toBeNull();
    expect(wheel({ deltaX: 0, deltaY: 2, deltaMode: 1 })).toEqual({ dx: 0, dy: 1 });
    expect(wheel(px(30))).toBeNull();
    expect(wheel(px(-90))).toEqual({ dx: 0, dy: -1 });
  });
});
