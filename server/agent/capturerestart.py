"""The picture's path (capture → conversion → encoder) started again in place when it fails, so a viewer never keeps
a frozen picture.

A negotiation that fails mid-stream stops the capture's thread for good (seen in .ci/run: 'not-negotiated' out of
ximagesrc, from a frame-rate change racing a negotiation, which capturerate.py now avoids); the base source then sends
EOS down into webrtcbin (in that run the sound stopped too, a second later). Here the EOS never leaves the capture,
and on the error the capture is stopped, the path up to the encoder flushed (the queue forgets the failure it keeps,
the encoder its frames; the flush stops at the encoder's output, so webrtcbin's RTP session and the link never see
it) and the capture started again: it negotiates from the screen as it is, and the encoder's first frame after it is
an IDR. The viewer's connection, its data channel and its sound go on. More than MAX_RESTARTS in WINDOW_S and the
viewer is given up (`give_up`): the tab connects again with a new pipeline.
"""
import time

from gi.repository import GLib, Gst

MAX_RESTARTS = 3
WINDOW_S = 10.0
DELAY_MS = 50  # the failed thread has paused; a moment for the X server to settle after a resize


class CaptureRestart:
    def __init__(self, cap, enc, path, log, keyframe, give_up):
        """`cap` the capture, `enc` the encoder, `path` every element from the capture to the encoder (an error from
        any of them restarts); `keyframe` asks the encoder for an IDR, `give_up` ends the viewer."""
        self.cap = cap
        self.path = set(path)
        self.log = log
        self.keyframe = keyframe
        self.give_up = give_up
        self.times = []
        self.pending = False
        self.closed = False
        self.restarts = 0
        cap.get_static_pad('src').add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, self._no_eos)
        flushes = Gst.PadProbeType.EVENT_DOWNSTREAM | Gst.PadProbeType.EVENT_FLUSH
        enc.get_static_pad('src').add_probe(flushes, self._flush_stops_here)

    @staticmethod
    def _no_eos(_pad, info):
        ev = info.get_event()
        return Gst.PadProbeReturn.DROP if ev and ev.type == Gst.EventType.EOS else Gst.PadProbeReturn.OK

    @staticmethod
    def _flush_stops_here(_pad, info):
        ev = info.get_event()
        flush = ev and ev.type in (Gst.EventType.FLUSH_START, Gst.EventType.FLUSH_STOP)
        return Gst.PadProbeReturn.DROP if flush else Gst.PadProbeReturn.OK

    def owns(self, element):
        return element in self.path

    def failed(self):
        """An error from the path (on the main loop, from the bus): one restart is scheduled."""
        if self.closed or self.pending:
            return
        now = time.monotonic()
        self.times = [t for t in self.times if now - t < WINDOW_S] + [now]
        if len(self.times) > MAX_RESTARTS:
            self.log('picture path failed %d times in %.0f s: the viewer is ended, its tab connects again' % (len(self.times), WINDOW_S))
            self.closed = True
            self.give_up()
            return
        self.pending = True
        GLib.timeout_add(DELAY_MS, self._restart)

    def _restart(self):
        self.pending = False
        if self.closed:
            return False
        self.cap.set_state(Gst.State.NULL)
        sink = self.cap.get_static_pad('src').get_peer()
        if sink:
            sink.send_event(Gst.Event.new_flush_start())
            sink.send_event(Gst.Event.new_flush_stop(False))
        self.cap.sync_state_with_parent()
        self.restarts += 1
        self.log('picture path started again (%d so far this viewer)' % self.restarts)
        self.keyframe()
        return False

    def close(self):
        self.closed = True


def path_between(first, last):
    """The elements from `first` down to `last`, both included, following their 'src' pads' links."""
    out = [first]
    el = first
    while el is not last:
        src = el.get_static_pad('src')
        peer = src.get_peer() if src else None
        el = peer.get_parent_element() if peer else None
        if el is None:
            break
        out.append(el)
    return out
