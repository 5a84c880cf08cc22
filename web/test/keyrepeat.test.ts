import { describe, expect, it } from 'vitest';
import { repeatsAsPresses } from '../src/pages/Connect/keyrepeat';

function harness() {
  const log: string[] = [];
  const mode = { extended: true };
  const send = repeatsAsPresses(
    (s, code, down) => log.push(`${down === undefined ? 'tap' : down ? 'down' : 'up'} ${s.toString(16)} ${code}`),
    () => mode.extended,
  );
  return { log, send, mode };
}

describe('the VNC view repeats a held key as releases and presses (X drops a second press of a key that is down)', () => {
  it('a repeat of a held key is a release and a press; its key-up ends it once', () => {
    const { log, send } = harness();
    send(0x78, 'KeyX', true);
    send(0x78, 'KeyX', true);
    send(0x78, 'KeyX', true);
    send(0x78, 'KeyX', false);
    expect(log).toEqual(['down 78 KeyX', 'up 78 KeyX', 'down 78 KeyX', 'up 78 KeyX', 'down 78 KeyX', 'up 78 KeyX']);
  });

  it('releases what was pressed on that key, even when the repeat names another keysym (Shift let go mid-hold)', () => {
    const { log, send } = harness();
    send(0x3e, 'Period', true); // '>'
    send(0x2e, 'Period', true); // '.' once Shift is up
    send(0x2e, 'Period', false);
    expect(log).toEqual(['down 3e Period', 'up 3e Period', 'down 2e Period', 'up 2e Period']);
  });

  it('a held modifier does not repeat; other keys and taps pass as they are', () => {
    const { log, send } = harness();
    send(0xffe1, 'ShiftLeft', true);
    send(0xffe1, 'ShiftLeft', true);
    send(0x41, 'KeyA', true);
    send(0x41, 'KeyA', false);
    send(0xffe1, 'ShiftLeft', false);
    send(0x61, null); // a typed character: press and release in one
    send(0x61, null);
    expect(log).toEqual(['down ffe1 ShiftLeft', 'down 41 KeyA', 'up 41 KeyA', 'up ffe1 ShiftLeft', 'tap 61 null', 'tap 61 null']);
  });
});

describe('the VNC view releases a key the way it pressed it (Xvnc knows a key by its scancode or by its keysym)', () => {
  it('a key pressed before the server took scancodes is released by keysym after', () => {
    const { log, send, mode } = harness();
    mode.extended = false;
    send(0x65, 'KeyE', true);
    mode.extended = true; // the server's word arrives while 'e' is down
    send(0x65, 'KeyE', false);
    send(0x65, 'KeyE', true);
    send(0x65, 'KeyE', false);
    expect(log).toEqual(['down 65 null', 'up 65 null', 'down 65 KeyE', 'up 65 KeyE']);
  });

  it("a repeat across the change releases the old way and presses the new one", () => {
    const { log, send, mode } = harness();
    mode.extended = false;
    send(0x78, 'KeyX', true);
    mode.extended = true;
    send(0x78, 'KeyX', true);
    send(0x78, 'KeyX', false);
    expect(log).toEqual(['down 78 null', 'up 78 null', 'down 78 KeyX', 'up 78 KeyX']);
  });
});
