"""Tells when the desktop's clipboard changes hands, from the X server's XFixes selection events.

Every copy in the desktop makes its program the CLIPBOARD selection's owner, and XFixes reports each new owner. The
agent reads the clipboard (clipboard.py) only then, instead of running xclip every 0.7 s while someone views the
desktop (about 3.2 ms of CPU each time, measured in a desktop: almost 0.2 of a core for a class of 40), and the tab
has the copied text at once.
"""
import ctypes

from gi.repository import GLib

from xlib import ID as _ID, P as _P, event_base, open_display, pending_event_types, x11 as _x11

_xfixes = ctypes.CDLL('libXfixes.so.3')  # by soname (see xlib.py)
_xfixes.XFixesQueryExtension.argtypes = [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
_xfixes.XFixesSelectSelectionInput.argtypes = [_P, _ID, _ID, ctypes.c_ulong]

_SET_SELECTION_OWNER_NOTIFY_MASK = 1
_SELECTION_NOTIFY = 0  # XFixesSelectionNotify, after the extension's event base


class ClipboardWatch:
    """Calls `changed()` on the GLib main loop each time the CLIPBOARD selection gets a new owner."""

    def __init__(self, display, changed):
        self.changed = changed
        self.dpy = open_display(display)
        self.notify = event_base(self.dpy, _xfixes.XFixesQueryExtension, 'XFixes') + _SELECTION_NOTIFY
        clipboard = _x11.XInternAtom(self.dpy, b'CLIPBOARD', 0)
        _xfixes.XFixesSelectSelectionInput(self.dpy, _x11.XDefaultRootWindow(self.dpy), clipboard, _SET_SELECTION_OWNER_NOTIFY_MASK)
        _x11.XFlush(self.dpy)
        self.event = (ctypes.c_long * 24)()  # an XEvent
        fd = _x11.XConnectionNumber(self.dpy)
        GLib.io_add_watch(fd, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self._readable)

    def _readable(self, _fd, condition):
        if condition & (GLib.IO_HUP | GLib.IO_ERR):
            return False  # the X server went away: the desktop is ending
        if self.notify in set(pending_event_types(self.dpy, self.event)):
            self.changed()
        return True
