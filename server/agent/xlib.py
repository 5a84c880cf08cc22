"""libX11 through ctypes, declared once for the agent's X modules (xinput, xscreen, xwindows, clipwatch).

Loaded by soname: ctypes.util.find_library runs `ldconfig -p` in a child process, 7 of them at each desktop's start.
Each module opens its own display connection; only the prototypes are shared here.
"""
import ctypes

P = ctypes.c_void_p
ID = ctypes.c_ulong  # Window, Atom, KeySym
_int_p = ctypes.POINTER(ctypes.c_int)

x11 = ctypes.CDLL('libX11.so.6')


def _declare(name, argtypes, restype=ctypes.c_int):
    f = getattr(x11, name)
    f.argtypes = argtypes
    f.restype = restype


for _name, _args, _res in (
    # Connections and their queues.
    ('XOpenDisplay', [ctypes.c_char_p], P),
    ('XCloseDisplay', [P], ctypes.c_int),
    ('XConnectionNumber', [P], ctypes.c_int),
    ('XFlush', [P], ctypes.c_int),
    ('XSync', [P, ctypes.c_int], ctypes.c_int),
    ('XPending', [P], ctypes.c_int),
    ('XNextEvent', [P, P], ctypes.c_int),
    ('XFree', [P], ctypes.c_int),
    ('XSetErrorHandler', [P], P),
    ('XGrabServer', [P], ctypes.c_int),
    ('XUngrabServer', [P], ctypes.c_int),
    # The screen and its windows.
    ('XDefaultScreen', [P], ctypes.c_int),
    ('XDisplayWidth', [P, ctypes.c_int], ctypes.c_int),
    ('XDisplayHeight', [P, ctypes.c_int], ctypes.c_int),
    ('XDefaultRootWindow', [P], ID),
    ('XInternAtom', [P, ctypes.c_char_p, ctypes.c_int], ID),
    ('XGetGeometry', [P, ID] + [P] * 7, ctypes.c_int),
    ('XGetWindowProperty', [P, ID, ID, ctypes.c_long, ctypes.c_long, ctypes.c_int, ID, ctypes.POINTER(ID), _int_p,
                            ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(P)], ctypes.c_int),
    ('XTranslateCoordinates', [P, ID, ID, ctypes.c_int, ctypes.c_int, _int_p, _int_p, ctypes.POINTER(ID)], ctypes.c_int),
    ('XQueryPointer', [P, ID, ctypes.POINTER(ID), ctypes.POINTER(ID), _int_p, _int_p, _int_p, _int_p, ctypes.POINTER(ctypes.c_uint)],
     ctypes.c_int),
    ('XSendEvent', [P, ID, ctypes.c_int, ctypes.c_long, P], ctypes.c_int),
    # The keyboard.
    ('XKeysymToKeycode', [P, ID], ctypes.c_ubyte),
    ('XkbKeycodeToKeysym', [P, ctypes.c_ubyte, ctypes.c_int, ctypes.c_int], ID),
    ('XDisplayKeycodes', [P, _int_p, _int_p], ctypes.c_int),
    ('XGetKeyboardMapping', [P, ctypes.c_ubyte, ctypes.c_int, _int_p], ctypes.POINTER(ID)),
    ('XChangeKeyboardMapping', [P, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ID), ctypes.c_int], ctypes.c_int),
):
    _declare(_name, _args, _res)


def open_display(display):
    """A connection of this module's own to the desktop's X server; RuntimeError when there is none."""
    dpy = x11.XOpenDisplay(display.encode())
    if not dpy:
        raise RuntimeError('cannot open display %s' % display)
    return dpy


def optional_event_base(dpy, query_extension):
    """An extension's first event number (`query_extension`: its XxxQueryExtension), or None without it."""
    base, errors = ctypes.c_int(), ctypes.c_int()
    return base.value if query_extension(dpy, ctypes.byref(base), ctypes.byref(errors)) else None


def event_base(dpy, query_extension, name):
    """The same for an extension the caller cannot do without: without it the connection is closed and RuntimeError
    raised."""
    base = optional_event_base(dpy, query_extension)
    if base is None:
        x11.XCloseDisplay(dpy)
        raise RuntimeError('the X server has no %s' % name)
    return base


def pending_event_types(dpy, event):
    """The type of each event Xlib has read or can read now, taken off the queue into `event` (an XEvent buffer)."""
    while x11.XPending(dpy):
        x11.XNextEvent(dpy, event)
        yield ctypes.cast(event, ctypes.POINTER(ctypes.c_int))[0]
