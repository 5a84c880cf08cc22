"""Synthetic input on the desktop's X server through XTest (libXtst via ctypes: no extra Python package)."""
import ctypes
import threading

from xlib import open_display, x11 as _x11

_xtst = ctypes.CDLL('libXtst.so.6')  # by soname (see xlib.py)
_xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_ulong]
_xtst.XTestFakeRelativeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_ulong]
_xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
_xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]


SHIFT_L, SHIFT_R = 0xffe1, 0xffe2
# Shift_L..Hyper_R (with Caps_Lock and Shift_Lock), ISO_Level3_Shift, Mode_switch, Num_Lock.
_MODIFIERS = frozenset(range(0xffe1, 0xffef)) | {0xfe03, 0xff7e, 0xff7f}
# Keys held down at once: a keyboard holds a handful; a viewer sending key-downs without key-ups is refused past this.
MAX_HELD = 32


def _is_modifier(keysym):
    return keysym in _MODIFIERS


class XInput:
    """Pointer, wheel and keys (as keysyms) on one display; remembers what is held so it can let go of it all."""

    def __init__(self, display):
        self.dpy = open_display(display)
        self.lock = threading.Lock()
        self.keys = {}  # keysym -> keycode held down
        self.buttons = set()
        # Keycodes without keysyms, borrowed in turn for keysyms the keymap lacks ('€', 'ñ' on a US map). Each new
        # character takes the next one: a client that reads its key press after the map changed again (typed text
        # comes fast) would otherwise see the newer character on the same keycode.
        self.spares = None
        self.next_spare = 0

    def size(self):
        with self.lock:
            s = _x11.XDefaultScreen(self.dpy)
            return _x11.XDisplayWidth(self.dpy, s), _x11.XDisplayHeight(self.dpy, s)

    def move(self, x, y):
        with self.lock:
            _xtst.XTestFakeMotionEvent(self.dpy, -1, int(x), int(y), 0)
            _x11.XFlush(self.dpy)

    def move_by(self, dx, dy):
        with self.lock:
            _xtst.XTestFakeRelativeMotionEvent(self.dpy, int(dx), int(dy), 0)
            _x11.XFlush(self.dpy)

    def button(self, b, down):
        b = int(b)
        if b < 1 or b > 9:
            return
        with self.lock:
            _xtst.XTestFakeButtonEvent(self.dpy, b, 1 if down else 0, 0)
            _x11.XFlush(self.dpy)
            (self.buttons.add if down else self.buttons.discard)(b)

    def wheel(self, dy, dx=0):
        """Wheel notches: X has no wheel axis, buttons 4/5 (vertical) and 6/7 (horizontal) stand for it."""
        for n, up, down in ((dy, 4, 5), (dx, 6, 7)):
            for _ in range(min(abs(int(n)), 10)):
                b = up if n < 0 else down
                self.button(b, True)
                self.button(b, False)

    def _spare_code(self):
        if self.spares is None:
            lo, hi = ctypes.c_int(), ctypes.c_int()
            _x11.XDisplayKeycodes(self.dpy, ctypes.byref(lo), ctypes.byref(hi))
            per = ctypes.c_int()
            n = hi.value - lo.value + 1
            m = _x11.XGetKeyboardMapping(self.dpy, lo.value, n, ctypes.byref(per))
            self.spares = [lo.value + i for i in range(n - 1, -1, -1) if all(m[i * per.value + j] == 0 for j in range(per.value))]
            _x11.XFree(m)
        held = set(self.keys.values())
        for _ in range(len(self.spares)):
            code = self.spares[self.next_spare % len(self.spares)]
            self.next_spare += 1
            if code not in held:
                return code
        return None

    def key(self, keysym, down):
        keysym = int(keysym)
        with self.lock:
            if not down:
                self._release(keysym)
            elif self._may_press(keysym):
                self._press(keysym)
            _x11.XFlush(self.dpy)

    def _release(self, keysym):
        code = self.keys.pop(keysym, None)
        if code is not None:
            _xtst.XTestFakeKeyEvent(self.dpy, code, 0, 0)

    def _may_press(self, keysym):
        """False for a press to drop. The viewer's repeat of a held key (the browser repeats it; the desktop's X has no
        auto-repeat of its own, and drops a second press of a key that is down) is let go first, so it goes as a release
        and a press, as X's own repeat makes them. Modifiers do not repeat; past MAX_HELD keys nothing more is held."""
        if keysym in self.keys:
            if _is_modifier(keysym):
                return False
            _xtst.XTestFakeKeyEvent(self.dpy, self.keys[keysym], 0, 0)
            return True
        return len(self.keys) < MAX_HELD

    def _keycode(self, keysym):
        """The keycode that types the keysym: the keymap's, else a spare one mapped to it (0 when none is left)."""
        code = _x11.XKeysymToKeycode(self.dpy, keysym)
        if code:
            return code
        code = self._spare_code()
        if code:
            syms = (ctypes.c_ulong * 2)(keysym, keysym)
            _x11.XChangeKeyboardMapping(self.dpy, code, 2, syms, 1)
            _x11.XSync(self.dpy, 0)
        return code or 0

    def _press(self, keysym):
        code = self._keycode(keysym)
        if not code:
            self.keys.pop(keysym, None)
            return
        self.keys[keysym] = code
        # A keysym on the shifted level ('>' on the '.' key) needs Shift, which the browser may not have sent.
        shifted = _x11.XkbKeycodeToKeysym(self.dpy, code, 0, 0) != keysym and _x11.XkbKeycodeToKeysym(self.dpy, code, 0, 1) == keysym
        shift_held = any(k in self.keys for k in (SHIFT_L, SHIFT_R))
        shift = _x11.XKeysymToKeycode(self.dpy, SHIFT_L) if shifted and not shift_held else 0
        if shift:
            _xtst.XTestFakeKeyEvent(self.dpy, shift, 1, 0)
        _xtst.XTestFakeKeyEvent(self.dpy, code, 1, 0)
        if shift:
            _xtst.XTestFakeKeyEvent(self.dpy, shift, 0, 0)

    def release_all(self):
        for k in list(self.keys):
            self.key(k, False)
        for b in list(self.buttons):
            self.button(b, False)
