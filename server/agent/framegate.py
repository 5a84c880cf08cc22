"""Frames only while the picture changes (the rule: gaterule.py; its constants named below are there).

A viewer's pipeline grabs the screen 30 or 60 times a second; converting and encoding a frame that did not change
costs as much as one that did: a still 1920×1080 desktop with a viewer took 0.82-0.84 cores at 60 fps (the agent's
pipeline alone in a desktop) for a stream of empty frames, 0.08-0.09 with the gate. The gate lets a grabbed frame
on to conversion and encoding only when
- the screen changed less than SETTLE_S ago (X DAMAGE on the root window, or a new cursor shape) and the encoder
  has not settled since: a change's first frame is coarse at the link's rate and the next ones sharpen it, until
  SETTLED_FRAMES in a row encode under SETTLED_BYTES (on a still 1920×1080 desktop x264 went on sharpening, in frames
  of 0.1-2 KB, for over a second: SETTLE_S bounds it, and the frames below sharpen the rest), or
- the viewer sent input less than INPUT_HOLD_S ago (an app's answer to a key comes a moment after the key), or a
  keyframe was asked for, or the pointer moved: the capture draws it into the picture and its moves damage nothing,
  so while a viewer is attached the gate looks where it is every POINTER_LOOK_MS (an instructor's VNC take-over or a
  program in the desktop moves it too, not only the viewer's input), or
- IDLE_FRAME_S passed since the last one: a still screen still sends a few frames a second, so the viewer's stream
  (its stats, its fallback watch) stays alive and Chrome never waits long enough to ask for a keyframe.
The grab itself (Xvnc's copy) goes on at the capture's rate: it is what tells the probe a frame is due.
"""
import ctypes
import time

import gi

gi.require_version('Gst', '1.0')
from gi.repository import GLib, Gst  # noqa: E402

from gaterule import GateRule  # noqa: E402
from xlib import ID as _ID, P as _P, event_base, open_display, optional_event_base, pending_event_types, x11 as _x11  # noqa: E402


_damage = ctypes.CDLL('libXdamage.so.1')  # by soname (see xlib.py)
_damage.XDamageQueryExtension.argtypes = [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
_damage.XDamageQueryVersion.argtypes = [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
_damage.XDamageCreate.argtypes = [_P, _ID, ctypes.c_int]
_damage.XDamageCreate.restype = _ID
_damage.XDamageSubtract.argtypes = [_P, _ID, _ID, _ID]
_xfixes = ctypes.CDLL('libXfixes.so.3')
_xfixes.XFixesQueryExtension.argtypes = [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
_xfixes.XFixesSelectCursorInput.argtypes = [_P, _ID, ctypes.c_ulong]

_REPORT_NON_EMPTY = 3  # XDamageReportNonEmpty: one event, then none until the damage is subtracted
_DISPLAY_CURSOR_NOTIFY_MASK = 1
_CURSOR_NOTIFY = 1  # XFixesCursorNotify, after the extension's event base
POINTER_LOOK_MS = 50


class FrameGate:
    """The rule, fed by the X server's DAMAGE and cursor events on the GLib main loop, as a probe on a pipeline."""

    def __init__(self, display):
        self.rule = GateRule()
        self.dpy = open_display(display)
        self.damage_event = event_base(self.dpy, _damage.XDamageQueryExtension, 'DAMAGE')
        # The server refuses every other DAMAGE request from a client that has not said which version it speaks.
        major, minor = ctypes.c_int(1), ctypes.c_int(1)
        _damage.XDamageQueryVersion(self.dpy, ctypes.byref(major), ctypes.byref(minor))
        root = _x11.XDefaultRootWindow(self.dpy)
        self.damage = _damage.XDamageCreate(self.dpy, root, _REPORT_NON_EMPTY)
        xfixes = optional_event_base(self.dpy, _xfixes.XFixesQueryExtension)  # new cursor shapes, where it has XFixes
        self.cursor_event = None if xfixes is None else xfixes + _CURSOR_NOTIFY
        if xfixes is not None:
            _xfixes.XFixesSelectCursorInput(self.dpy, root, _DISPLAY_CURSOR_NOTIFY_MASK)
        _x11.XFlush(self.dpy)
        self.event = (ctypes.c_long * 24)()  # an XEvent
        self.root = root
        self.pointer = None
        self.pointer_timer = None
        # XQueryPointer's answers (root and child windows, root and window x/y, buttons), made once for every look.
        self.query_ids = [_ID(), _ID()]
        self.query_xy = [ctypes.c_int() for _ in range(4)]
        self.query_mask = ctypes.c_uint()
        self.query_args = [ctypes.byref(v) for v in self.query_ids + self.query_xy + [self.query_mask]]
        GLib.io_add_watch(_x11.XConnectionNumber(self.dpy), GLib.PRIORITY_HIGH, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self._readable)

    def _readable(self, _fd, condition):
        if condition & (GLib.IO_HUP | GLib.IO_ERR):
            return False  # the X server went away: the desktop is ending
        self._take_events()
        return True

    def _take_events(self):
        """Every event Xlib has read or can read now (a round trip such as the pointer's look reads them into its
        queue, where the socket's watch would not see them)."""
        kinds = set(pending_event_types(self.dpy, self.event))
        if self.damage_event in kinds or self.cursor_event in kinds:
            self.rule.changed()
            # Re-armed at once: the next drawing reports again (at most one event per drawing request).
            _damage.XDamageSubtract(self.dpy, self.damage, 0, 0)
            _x11.XFlush(self.dpy)

    def input(self):
        """The viewer sent input, or asked for a keyframe, or the desktop's size changed: frames go on for a moment
        and the encoder may settle again."""
        self.rule.input(time.monotonic())

    def attach(self, cap, enc):
        """Gates a new viewer's pipeline: `cap` the capture, `enc` the encoder (its frames' sizes tell when it
        settled). The new viewer starts with the gate open."""
        self.rule.new_viewer()
        if self.pointer_timer is None:
            self.pointer_timer = GLib.timeout_add(POINTER_LOOK_MS, self._look_at_pointer)
        cap.get_static_pad('src').add_probe(Gst.PadProbeType.BUFFER, self._on_grabbed)
        enc.get_static_pad('src').add_probe(Gst.PadProbeType.BUFFER, self._on_encoded)

    def detach(self):
        """The viewer left: the pointer is no longer looked at (the next viewer's attach starts again). On the
        main loop, as attach."""
        if self.pointer_timer is not None:
            GLib.source_remove(self.pointer_timer)
            self.pointer_timer = None
        self.pointer = None

    def _look_at_pointer(self):
        if _x11.XQueryPointer(self.dpy, self.root, *self.query_args):
            at = (self.query_xy[0].value, self.query_xy[1].value)
            if self.pointer is not None and at != self.pointer:
                self.rule.changed()
            self.pointer = at
        self._take_events()
        return True

    def summary(self):
        """What the gate did for the viewer attached last, for the agent's log."""
        r = self.rule
        return 'frame gate: %d of %d grabbed frames held back (unchanged)' % (r.dropped, r.dropped + r.passed)

    def _on_grabbed(self, _pad, _info):
        return Gst.PadProbeReturn.OK if self.rule.frame(time.monotonic()) else Gst.PadProbeReturn.DROP

    def _on_encoded(self, _pad, info):
        buf = info.get_buffer()
        if buf:
            self.rule.encoded(buf.get_size())
        return Gst.PadProbeReturn.OK
