import { describe, expect, it } from 'vitest';
import { VncPasteKeys, type PasteKeyEvent } from '../src/pages/Connect/vncpaste';

const CTRL = 0xffe3;
const V = 0x76;
const INSERT = 0xff63;

/** A key event; modifiers as the browser reports them after the event. */
const ev = (key: string, code: string, mods: { ctrl?: boolean; shift?: boolean; alt?: boolean; repeat?: boolean } = {}): PasteKeyEvent => ({
  key, code, ctrlKey: !!mods.ctrl, shiftKey: !!mods.shift, altKey: !!mods.alt, metaKey: false, repeat: !!mods.repeat,
});

/** A clipboard read the test answers when it likes, and what reached the desktop, in order. */
function harness() {
  const log: string[] = [];
  let answer: { ok(text: string): void; no(): void } | null = null;
  const keys = new VncPasteKeys({
    read: () => new Promise<string>((ok, no) => { answer = { ok, no: () => no(new Error('refused')) }; }),
    paste: (text) => log.push(`paste ${text}`),
    key: (s, code, down) => log.push(`${down ? 'down' : 'up'} ${s.toString(16)} ${code}`),
  });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return { log, keys, settle, read: () => answer! };
}

describe('paste keys in the VNC view', () => {
  it('Ctrl+V: the local clipboard becomes the desktop\'s first, then V goes (Ctrl is still held)', async () => {
    const h = harness();
    expect(h.keys.down(ev('Control', 'ControlLeft', { ctrl: true }))).toBe(false); // noVNC sends Ctrl itself
    expect(h.keys.down(ev('v', 'KeyV', { ctrl: true }))).toBe(true);
    expect(h.log).toEqual([]); // nothing before the text
    h.read().ok('café ü €');
    await h.settle();
    expect(h.log).toEqual(['paste café ü €', `down ${V.toString(16)} KeyV`]);
    expect(h.keys.up(ev('v', 'KeyV', { ctrl: true }))).toBe(true);
    expect(h.keys.up(ev('Control', 'ControlLeft'))).toBe(false);
    expect(h.log.at(-1)).toBe(`up ${V.toString(16)} KeyV`);
  });

  it('keys let go while the browser asked: the whole chord goes once the text is there, modifier included', async () => {
    const h = harness();
    h.keys.down(ev('v', 'KeyV', { ctrl: true }));
    expect(h.keys.up(ev('v', 'KeyV', { ctrl: true }))).toBe(true);
    h.keys.up(ev('Control', 'ControlLeft'));
    h.read().ok('text');
    await h.settle();
    expect(h.log).toEqual(['paste text', `down ${CTRL.toString(16)} ControlLeft`, `down ${V.toString(16)} KeyV`, `up ${V.toString(16)} KeyV`, `up ${CTRL.toString(16)} ControlLeft`]);
  });

  it('refused (or nothing to read): the key goes alone, so the desktop pastes its own clipboard', async () => {
    const h = harness();
    h.keys.down(ev('Insert', 'Insert', { shift: true }));
    h.read().no();
    await h.settle();
    expect(h.log).toEqual([`down ${INSERT.toString(16)} Insert`]);
    h.keys.up(ev('Insert', 'Insert', { shift: true }));
    expect(h.log).toEqual([`down ${INSERT.toString(16)} Insert`, `up ${INSERT.toString(16)} Insert`]);
  });

  it('other keys, Alt chords and auto-repeat: not taken, or taken once', async () => {
    const h = harness();
    expect(h.keys.down(ev('v', 'KeyV'))).toBe(false);
    expect(h.keys.down(ev('v', 'KeyV', { ctrl: true, alt: true }))).toBe(false);
    expect(h.keys.down(ev('c', 'KeyC', { ctrl: true }))).toBe(false);
    expect(h.keys.down(ev('v', 'KeyV', { ctrl: true }))).toBe(true);
    expect(h.keys.down(ev('v', 'KeyV', { ctrl: true, repeat: true }))).toBe(true); // still ours, no second read
    h.read().ok('x');
    await h.settle();
    expect(h.log.filter((l) => l.startsWith('paste'))).toEqual(['paste x']);
    h.keys.releaseAll(); // the view lost the keyboard with V down
    expect(h.log.at(-1)).toBe(`up ${V.toString(16)} KeyV`);
    expect(h.keys.up(ev('v', 'KeyV'))).toBe(false);
  });
});
