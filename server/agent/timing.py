"""Where a frame's time goes inside the agent, for the stage budget bench:stream prints: capture (the X server's
copy: ximagesrc stamps a frame when it starts grabbing), conversion to I420 and the queue to the encoder, and
encoding; the slowest frame's whole way through them and its three parts (a stall the means hide); plus the
encoded frames' sizes and count. Buffer probes on the pipeline's pads; read and reset by summary() (the viewer gets
it over the data channel as {"t": "timing", ...})."""
import collections
import threading

from gi.repository import Gst

class FrameTiming:
    def __init__(self, pipe, cap, enc):
        self.pipe = pipe
        self.lock = threading.Lock()
        # Frames between capture and the encoder's output, oldest first. Matched in order, not by timestamp: encoders
        # re-base their output timestamps (x264enc: first frame at 1000 hours); with no B-frames and no lookahead
        # each input frame leaves in order.
        self.captured = {}  # pts → (running time out of the capture, capture duration)
        self.entered = collections.deque(maxlen=120)  # (running time in, capture info) per frame at the encoder
        self._reset()
        if cap and enc:
            cap.get_static_pad('src').add_probe(Gst.PadProbeType.BUFFER, self.on_captured)
            enc.get_static_pad('sink').add_probe(Gst.PadProbeType.BUFFER, self.on_enc_in)
            enc.get_static_pad('src').add_probe(Gst.PadProbeType.BUFFER, self.on_enc_out)

    def _reset(self):
        self.n = 0
        self.frames_out = 0
        self.sums = {'capture': 0.0, 'convert': 0.0, 'encode': 0.0}
        self.slowest = (0, 0, 0)  # capture, convert + queue, encode (ns) of the slowest frame
        self.bytes = 0
        self.max_bytes = 0
        self.keyframes = 0

    def _now(self):
        pipe = self.pipe
        clock = pipe.get_clock() if pipe else None
        return clock.get_time() - pipe.get_base_time() if clock else None

    def close(self):
        """The viewer left: the pipeline is no longer held from here (its pads' probes hold this object)."""
        self.pipe = None

    def on_captured(self, _pad, info):
        buf, now = info.get_buffer(), self._now()
        if buf and now is not None and buf.pts != Gst.CLOCK_TIME_NONE:
            with self.lock:
                self.captured[buf.pts] = (now, max(0, now - buf.pts))
                if len(self.captured) > 120:
                    self.captured.pop(next(iter(self.captured)))
        return Gst.PadProbeReturn.OK

    def on_enc_in(self, _pad, info):
        buf, now = info.get_buffer(), self._now()
        if buf and now is not None:
            with self.lock:
                self.entered.append((now, self.captured.pop(buf.pts, None)))
        return Gst.PadProbeReturn.OK

    def on_enc_out(self, _pad, info):
        buf, now = info.get_buffer(), self._now()
        if not buf or now is None:
            return Gst.PadProbeReturn.OK
        with self.lock:
            while self.entered and now - self.entered[0][0] > Gst.SECOND:
                self.entered.popleft()  # a frame the encoder dropped
            if self.entered:
                t_in, cap = self.entered.popleft()
                if cap is not None:
                    self.n += 1
                    convert, encode = max(0, t_in - cap[0]), max(0, now - t_in)
                    self.sums['capture'] += cap[1]
                    self.sums['convert'] += convert
                    self.sums['encode'] += encode
                    if cap[1] + convert + encode > sum(self.slowest):
                        self.slowest = (cap[1], convert, encode)
            size = buf.get_size()
            self.frames_out += 1
            self.bytes += size
            self.max_bytes = max(self.max_bytes, size)
            if not buf.has_flags(Gst.BufferFlags.DELTA_UNIT):
                self.keyframes += 1
        return Gst.PadProbeReturn.OK

    def summary(self, seconds):
        """Means per frame (ms) since the last summary, frames a second and sizes; then starts over."""
        with self.lock:
            n = max(1, self.n)
            out = {'t': 'timing', 'frames': self.n, 'fps': round(self.frames_out / seconds, 1),
                   'captureMs': round(self.sums['capture'] / n / 1e6, 2), 'convertMs': round(self.sums['convert'] / n / 1e6, 2),
                   'encodeMs': round(self.sums['encode'] / n / 1e6, 2), 'slowestMs': round(sum(self.slowest) / 1e6, 1),
                   'slowestParts': [round(x / 1e6, 1) for x in self.slowest],
                   'frameBytes': round(self.bytes / max(1, self.frames_out)),
                   'maxFrameBytes': self.max_bytes, 'keyframes': self.keyframes}
            self._reset()
            return out
