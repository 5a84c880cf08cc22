"""Brings the desktop's windows back on-screen after the screen shrank (libX11 via ctypes, EWMH requests to openbox).

Openbox, on a screen size change, only keeps a tenth of each window visible, so a desktop that follows a smaller tab
would leave windows mostly off-screen, out of the user's reach. After each resize the agent asks the window manager
(`_NET_MOVERESIZE_WINDOW`, as a pager would) to move every normal window inside the work area, and to make one that
is bigger than it fit. Maximized and full-screen windows are left to openbox, which fits those itself; docks (the
panel) and desktop windows are not touched. The request goes to openbox after the RandR change it was sent, so
openbox handles the new size first.
"""
import ctypes

from xlib import ID as _ID, P as _P, x11 as _x11


class _ClientMessage(ctypes.Structure):
    _fields_ = [('type', ctypes.c_int), ('serial', ctypes.c_ulong), ('send_event', ctypes.c_int), ('display', _P),
                ('window', _ID), ('message_type', _ID), ('format', ctypes.c_int), ('l', ctypes.c_long * 5)]


class _Event(ctypes.Union):
    _fields_ = [('xclient', _ClientMessage), ('pad', ctypes.c_long * 24)]


_CLIENT_MESSAGE = 33
_SUBSTRUCTURE = (1 << 19) | (1 << 20)  # SubstructureNotifyMask | SubstructureRedirectMask, as EWMH asks
_NORTH_WEST = 1  # gravity: x, y are the frame's top left corner
_MOVE = (1 << 8) | (1 << 9)
_SIZE = (1 << 10) | (1 << 11)
_FROM_PAGER = 2 << 12  # source indication: on the user's behalf, so the window manager obeys
_MAX_WINDOWS = 1024


def _atom(dpy, name):
    return _x11.XInternAtom(dpy, name.encode(), 0)


def _cardinals(dpy, win, prop, limit=_MAX_WINDOWS):
    """A 32-bit property (CARDINAL, WINDOW or ATOM list) as ints; [] when it is missing."""
    typ, fmt, n, after, data = _ID(), ctypes.c_int(), ctypes.c_ulong(), ctypes.c_ulong(), _P()
    ok = _x11.XGetWindowProperty(dpy, win, _atom(dpy, prop), 0, limit, 0, 0, ctypes.byref(typ), ctypes.byref(fmt),
                                 ctypes.byref(n), ctypes.byref(after), ctypes.byref(data))
    if ok != 0 or not data.value:
        return []
    try:
        if fmt.value != 32:
            return []
        # Format-32 items come as C longs whatever the platform's long size.
        return list(ctypes.cast(data, ctypes.POINTER(ctypes.c_ulong))[:n.value])
    finally:
        _x11.XFree(data)


def _geometry(dpy, root, win):
    """The client window's (x, y, w, h) on the root, or None when it is gone."""
    v = [_ID(), ctypes.c_int(), ctypes.c_int(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()]
    if not _x11.XGetGeometry(dpy, win, *(ctypes.cast(ctypes.byref(x), _P) for x in v)):
        return None
    x, y, child = ctypes.c_int(), ctypes.c_int(), _ID()
    if not _x11.XTranslateCoordinates(dpy, win, root, 0, 0, ctypes.byref(x), ctypes.byref(y), ctypes.byref(child)):
        return None
    return x.value, y.value, v[3].value, v[4].value


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def work_area(dpy, root, w, h):
    """The part of a w x h screen that windows may use: the screen less the panel's strut. Openbox updates its work
    area only after it has seen the new size, so the margins are taken from the size the work area was made for."""
    wa = _cardinals(dpy, root, '_NET_WORKAREA', 4)
    geo = _cardinals(dpy, root, '_NET_DESKTOP_GEOMETRY', 2)
    if len(wa) < 4 or len(geo) < 2:
        return 0, 0, w, h
    clamp = lambda v, hi: max(0, min(hi, v))  # noqa: E731
    left, top = clamp(wa[0], w // 4), clamp(wa[1], h // 4)
    right, bottom = clamp(geo[0] - wa[0] - wa[2], w // 4), clamp(geo[1] - wa[1] - wa[3], h // 4)
    return left, top, w - left - right, h - top - bottom


def placement(frame, extents, area):
    """Where a window's frame goes so it is wholly inside the area: (x, y, client w, client h), or None when it is
    already there. frame: (x, y, w, h) with decorations; extents: (left, right, top, bottom) of the decorations."""
    fx, fy, fw, fh = frame
    left, right, top, bottom = extents
    ax, ay, aw, ah = area
    nw, nh = min(fw, aw), min(fh, ah)
    nx, ny = max(ax, min(fx, ax + aw - nw)), max(ay, min(fy, ay + ah - nh))
    if (nx, ny, nw, nh) == (fx, fy, fw, fh):
        return None
    return nx, ny, max(1, nw - left - right), max(1, nh - top - bottom)


def fit_all(dpy, root, w, h):
    """Asks the window manager to bring every normal window wholly inside the w x h screen's work area; answers how
    many it asked to move."""
    area = work_area(dpy, root, w, h)
    skip_types = {_atom(dpy, '_NET_WM_WINDOW_TYPE_' + t) for t in ('DOCK', 'DESKTOP')}
    skip_states = {_atom(dpy, '_NET_WM_STATE_' + s) for s in ('MAXIMIZED_VERT', 'MAXIMIZED_HORZ', 'FULLSCREEN')}
    moveresize = _atom(dpy, '_NET_MOVERESIZE_WINDOW')
    moved = 0
    for win in _cardinals(dpy, root, '_NET_CLIENT_LIST'):
        if skip_types & set(_cardinals(dpy, win, '_NET_WM_WINDOW_TYPE', 16)):
            continue
        if skip_states & set(_cardinals(dpy, win, '_NET_WM_STATE', 16)):
            continue
        geo = _geometry(dpy, root, win)
        ext = [_signed(v) for v in _cardinals(dpy, win, '_NET_FRAME_EXTENTS', 4)]
        if geo is None:
            continue
        left, right, top, bottom = (ext + [0, 0, 0, 0])[:4] if len(ext) == 4 else (0, 0, 0, 0)
        x, y, cw, ch = geo
        frame = (x - left, y - top, cw + left + right, ch + top + bottom)
        where = placement(frame, (left, right, top, bottom), area)
        if where is None:
            continue
        nx, ny, nw, nh = where
        ev = _Event()
        m = ev.xclient
        m.type, m.send_event, m.display, m.window, m.message_type, m.format = _CLIENT_MESSAGE, 1, dpy, win, moveresize, 32
        resized = (nw, nh) != (cw, ch)
        m.l[0] = _NORTH_WEST | _MOVE | (_SIZE if resized else 0) | _FROM_PAGER
        m.l[1], m.l[2], m.l[3], m.l[4] = nx, ny, nw, nh
        _x11.XSendEvent(dpy, root, 0, _SUBSTRUCTURE, ctypes.byref(ev))
        moved += 1
    _x11.XFlush(dpy)
    return moved
