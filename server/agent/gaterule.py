"""When a grabbed frame goes on to the encoder: framegate.py's rule, apart from X and GStreamer (its test runs it
in plain python3). framegate.py says why."""

INPUT_HOLD_S = 0.1
SETTLE_S = 0.3
SETTLED_BYTES = 500
SETTLED_FRAMES = 3
# Chrome waits 3 × the offer's rtx-time (offer.py: 3 × 125 ms) for the next decodable frame, then asks for a
# keyframe: with a frame every 0.5 s a still desktop drew 1.5 keyframe requests a second (each 0.3 s of frames).
IDLE_FRAME_S = 0.25


class GateRule:
    """The decision, apart from X and GStreamer: `frame(now)` says whether a grabbed frame goes on."""

    def __init__(self):
        # Changes counted by the X events' thread and compared by the pipeline's: none is lost between the two.
        self.changes = 1
        self.changes_seen = 0
        self.changed_at = -SETTLE_S
        self.input_at = -INPUT_HOLD_S
        self.passed_at = -IDLE_FRAME_S
        self.small = 0
        self.passed = 0
        self.dropped = 0

    def new_viewer(self):
        """A new viewer's pipeline: its counts start again and it starts with a change to settle."""
        self.small = self.passed = self.dropped = 0
        self.changes += 1

    def changed(self):
        self.changes += 1

    def input(self, now):
        self.input_at = now
        self.changes += 1

    def encoded(self, size):
        self.small = self.small + 1 if size < SETTLED_BYTES else 0

    def frame(self, now):
        changes = self.changes
        if changes != self.changes_seen:
            self.changes_seen = changes
            self.changed_at = now
            self.small = 0
        settling = now - self.changed_at < SETTLE_S and self.small < SETTLED_FRAMES
        if settling or now - self.input_at < INPUT_HOLD_S or now - self.passed_at >= IDLE_FRAME_S:
            self.passed_at = now
            self.passed += 1
            return True
        self.dropped += 1
        return False
