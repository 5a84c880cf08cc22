"""The capture's frame rate, changed in the capture's own thread.

The rate is the caps of the capsfilter `rate` right after ximagesrc. Set from the main loop while the capture's thread
negotiates, it stopped the capture for good: the caps query went down through the filter at the old rate, came back
fixed at the old rate, and was intersected on its way up with the new one, which left nothing ('not-negotiated' out
of ximagesrc; GST_DEBUG of a failing connect: "<rate> intersect: EMPTY", then "<cap> no common caps"). It happened
when the tab's first size came while the new viewer's pipeline still negotiated: about 1 connect in 30-80 with a real
Chromium, and a red .ci/run.

So a new rate is only noted here, and a one-shot probe on the capture's output sets it before the next frame, in the
thread that negotiates: the filter then asks ximagesrc to negotiate again, with nothing in flight. The probe is there
only while a change waits, so frames pass no Python code for it.
"""
import threading

from gi.repository import Gst


class CaptureRate:
    def __init__(self, capsfilter, cap):
        """`capsfilter` the filter holding the rate, `cap` the capture whose frames pass it."""
        self.filter = capsfilter
        self.pad = cap.get_static_pad('src')
        self.lock = threading.Lock()
        self.pending = None

    def set(self, fps):
        """From any thread: the rate the capture takes before its next frame."""
        with self.lock:
            waiting, self.pending = self.pending is not None, Gst.Caps.from_string('video/x-raw,framerate=%d/1' % fps)
        if not waiting:
            self.pad.add_probe(Gst.PadProbeType.BUFFER, self._apply)

    def _apply(self, _pad, _info):
        with self.lock:
            caps, self.pending = self.pending, None
        if caps is not None:
            self.filter.set_property('caps', caps)
        return Gst.PadProbeReturn.REMOVE
