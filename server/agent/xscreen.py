"""The desktop's screen size through RandR (libXrandr via ctypes), so the desktop can follow the viewer's tab.

The desktop starts at its full size (`--screen`), the most a tab can ask for (Xvnc itself would allow 32768x32768).
New modes can be made, but one made by `xrandr --newmode` is gone before the next `xrandr --addmode` can use it (the X server drops a client's
unused modes when it disconnects). So the agent makes its modes on one connection it holds for its whole life, and
puts the desktop back to full size when the viewer leaves (VNC and the next viewer start from there).
"""
import ctypes
import threading

import xwindows
from xlib import ID as _ID, P as _P, open_display, x11 as _x11

_xrr = ctypes.CDLL('libXrandr.so.2')  # by soname (see xlib.py)


class _ModeInfo(ctypes.Structure):
    _fields_ = [('id', ctypes.c_ulong), ('width', ctypes.c_uint), ('height', ctypes.c_uint), ('dotClock', ctypes.c_ulong),
                ('hSyncStart', ctypes.c_uint), ('hSyncEnd', ctypes.c_uint), ('hTotal', ctypes.c_uint), ('hSkew', ctypes.c_uint),
                ('vSyncStart', ctypes.c_uint), ('vSyncEnd', ctypes.c_uint), ('vTotal', ctypes.c_uint),
                ('name', ctypes.c_char_p), ('nameLength', ctypes.c_uint), ('modeFlags', ctypes.c_ulong)]


class _Resources(ctypes.Structure):
    _fields_ = [('timestamp', ctypes.c_ulong), ('configTimestamp', ctypes.c_ulong),
                ('ncrtc', ctypes.c_int), ('crtcs', ctypes.POINTER(ctypes.c_ulong)),
                ('noutput', ctypes.c_int), ('outputs', ctypes.POINTER(ctypes.c_ulong)),
                ('nmode', ctypes.c_int), ('modes', ctypes.POINTER(_ModeInfo))]


_xrr.XRRGetScreenResources.restype = ctypes.POINTER(_Resources)
_xrr.XRRGetScreenResources.argtypes = [_P, _ID]
_xrr.XRRFreeScreenResources.argtypes = [ctypes.POINTER(_Resources)]
_xrr.XRRGetScreenSizeRange.argtypes = [_P, _ID] + [ctypes.POINTER(ctypes.c_int)] * 4
_xrr.XRRCreateMode.restype = _ID
_xrr.XRRCreateMode.argtypes = [_P, _ID, ctypes.POINTER(_ModeInfo)]
_xrr.XRRAddOutputMode.argtypes = [_P, _ID, _ID]
_xrr.XRRDeleteOutputMode.argtypes = [_P, _ID, _ID]
_xrr.XRRDestroyMode.argtypes = [_P, _ID]
_xrr.XRRSetCrtcConfig.argtypes = [_P, ctypes.POINTER(_Resources), _ID, _ID, ctypes.c_int, ctypes.c_int, _ID, ctypes.c_ushort,
                                  ctypes.POINTER(_ID), ctypes.c_int]
_xrr.XRRSetScreenSize.argtypes = [_P, _ID, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]

# A failed RandR request must not end the agent (Xlib's default handler exits the process).
_errors = []
_ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, _P, _P)(lambda _d, _e: _errors.append(1) or 0)
_x11.XSetErrorHandler(_ERROR_HANDLER)


class XScreen:
    def __init__(self, display, full='1920x1080'):
        self.dpy = open_display(display)
        self.root = _x11.XDefaultRootWindow(self.dpy)
        self.lock = threading.Lock()
        lo_w, lo_h, hi_w, hi_h = (ctypes.c_int() for _ in range(4))
        _xrr.XRRGetScreenSizeRange(self.dpy, self.root, *(ctypes.byref(v) for v in (lo_w, lo_h, hi_w, hi_h)))
        full_w, full_h = (int(v) for v in full.split('x'))
        self.max = (min(hi_w.value, full_w), min(hi_h.value, full_h))
        self.made = {}  # (w, h) -> mode id this connection created
        self.windows_moved = 0  # how many windows the last resize brought back on-screen

    def size(self):
        """The root window's size as the X server has it now."""
        v = [_ID(), ctypes.c_int(), ctypes.c_int(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()]
        _x11.XGetGeometry(self.dpy, self.root, *(ctypes.cast(ctypes.byref(x), _P) for x in v))
        return v[3].value, v[4].value

    def resize(self, w, h):
        """Sets the screen to w x h (already fitted); True when it changed."""
        with self.lock:
            cur_w, cur_h = self.size()
            if (w, h) == (cur_w, cur_h):
                return False
            res = _xrr.XRRGetScreenResources(self.dpy, self.root)
            try:
                r = res.contents
                if r.ncrtc < 1 or r.noutput < 1:
                    return False
                crtc, output = r.crtcs[0], r.outputs[0]
                mode = next((r.modes[i].id for i in range(r.nmode) if (r.modes[i].width, r.modes[i].height) == (w, h)), None)
                if mode is None:
                    name = b'%dx%d' % (w, h)
                    info = _ModeInfo(0, w, h, w * h * 60, w, w, w, 0, h, h, h, name, len(name), 0)
                    mode = _xrr.XRRCreateMode(self.dpy, self.root, ctypes.byref(info))
                    _xrr.XRRAddOutputMode(self.dpy, output, mode)
                    self.made[(w, h)] = mode
                outputs = (_ID * 1)(output)
                mm = lambda px: max(1, int(px * 25.4 / 96))  # noqa: E731 (96 dpi)
                del _errors[:]
                # The CRTC must always fit in the screen: a smaller picture is set before the screen shrinks, and a
                # bigger one after it grows. The grab keeps clients from seeing the step in between.
                _x11.XGrabServer(self.dpy)
                if w > cur_w or h > cur_h:
                    _xrr.XRRSetScreenSize(self.dpy, self.root, max(w, cur_w), max(h, cur_h), mm(w), mm(h))
                _xrr.XRRSetCrtcConfig(self.dpy, res, crtc, 0, 0, 0, mode, 1, outputs, 1)
                _xrr.XRRSetScreenSize(self.dpy, self.root, w, h, mm(w), mm(h))
                _x11.XUngrabServer(self.dpy)
                _x11.XSync(self.dpy, 0)
                if _errors:
                    return False
                # Modes of earlier sizes are let go, so a long session of window dragging does not pile them up.
                for size, old in list(self.made.items()):
                    if size != (w, h):
                        _xrr.XRRDeleteOutputMode(self.dpy, output, old)
                        _xrr.XRRDestroyMode(self.dpy, old)
                        del self.made[size]
                _x11.XSync(self.dpy, 0)
                # Openbox leaves only a tenth of a window on a screen that shrank: each is brought wholly back.
                self.windows_moved = xwindows.fit_all(self.dpy, self.root, w, h)
                return True
            finally:
                _xrr.XRRFreeScreenResources(res)
