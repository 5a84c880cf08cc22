import { describe, expect, it } from 'vitest';
import { isPasteKey, keysymOf, xButtonOf } from '../src/pages/Connect/keysym';

describe('the WebRTC view names keys and buttons as X does', () => {
  it('keysyms: named keys, left and right modifiers, function keys, Latin-1, the rest of Unicode', () => {
    expect(keysymOf({ key: 'Enter', code: 'Enter' })).toBe(0xff0d);
    expect(keysymOf({ key: 'Shift', code: 'ShiftRight' })).toBe(0xffe2);
    expect(keysymOf({ key: 'Control', code: 'ControlLeft' })).toBe(0xffe3);
    expect(keysymOf({ key: 'F12', code: 'F12' })).toBe(0xffc9);
    expect(keysymOf({ key: '>', code: 'Period' })).toBe(0x3e);
    expect(keysymOf({ key: 'é', code: 'Digit2' })).toBe(0xe9);
    expect(keysymOf({ key: '€', code: 'KeyE' })).toBe(0x010020ac);
    expect(keysymOf({ key: 'Dead', code: 'Quote' })).toBeNull();
  });

  it('mouse buttons: left, middle, right, and back and forward as 8 and 9; none for the rest', () => {
    expect([0, 1, 2, 3, 4].map(xButtonOf)).toEqual([1, 2, 3, 8, 9]);
    expect(xButtonOf(5)).toBeNull();
  });

  it('paste keys: Ctrl+V, Ctrl+Shift+V, Shift+Insert; not with Alt or Meta', () => {
    const k = (key: string, m: { ctrl?: boolean; shift?: boolean; alt?: boolean } = {}) =>
      isPasteKey({ key, ctrlKey: !!m.ctrl, shiftKey: !!m.shift, altKey: !!m.alt, metaKey: false });
    expect([k('v', { ctrl: true }), k('V', { ctrl: true, shift: true }), k('Insert', { shift: true })]).toEqual([true, true, true]);
    expect([k('v', { ctrl: true, alt: true }), k('v'), k('Insert')]).toEqual([false, false, false]);
  });
});
