"""The video's bitrate from what the viewer reports: back off when the link queues or loses much, probe up when clean.

Two signals, read once a second (peer.py, on_stats):
- Queueing, from transport-wide congestion control feedback (TWCC: the browser says when each packet arrived). When
  the link delivers the packets of a window clearly slower than they were sent and the gaps between packets grow, a
  queue is building at the bottleneck: the rate drops below what arrived. This is the forward path alone: an upload
  filling the link the other way lengthens the round trip but not this.
- Loss, counted from the running totals (packets sent; the receiver reports' cumulative lost) over at least
  LOSS_WINDOW packets. Each RTCP report's own "fraction lost" covers only the packets since the report before, and
  Chrome adds a report to every RTCP packet it sends (each NACK's too): on a 2% link those read 12-50% and the rate
  fell to its floor (bench:stream, LOSS=0.02). Random loss of a few percent is repaired by NACK/RTX and is no reason
  to back off; above LOSS_HIGH it is congestion.
Without TWCC (a browser that does not take it), a round trip over ROUND_TRIP_LIMIT is the queueing signal.
"""
import threading

# Caps in kbit/s. Auto keeps the whole stream under 2 Mbit/s with room for RTP/RTCP and audio overhead.
QUALITY_KBPS = {'auto': 1600, 'low': 500, 'medium': 1000, 'high': 3000}
MIN_KBPS = 250
LOSS_WINDOW = 200  # packets
LOSS_LOW, LOSS_HIGH = 0.02, 0.10
DELIVERY_SHORTFALL = 0.10  # received this much slower than sent, with growing gaps: a queue
ROUND_TRIP_LIMIT = 0.5  # s
PROBE_UP = 1.08  # each clean second
HOLD_AFTER_BACKOFF = 2  # seconds without probing up after a back-off
TWCC_SUMMED = ('bitrate-sent', 'bitrate-recv', 'avg-delta-of-delta')  # of each TWCC window, weighted by 'packets-sent'


class LossMeter:
    """Loss over windows of at least `window` packets, from running totals of packets sent and reported lost."""

    def __init__(self, window=LOSS_WINDOW):
        self.window = window
        self.start = None

    def add(self, sent, lost):
        """The totals now; the loss of the window that ends here, or None while it has fewer packets than `window`."""
        if self.start is None or sent < self.start[0] or lost < self.start[1]:
            self.start = (sent, lost)  # the first totals, or new ones (a new stream): begin a window
            return None
        packets = sent - self.start[0]
        if packets < self.window:
            return None
        fraction = min(1.0, (lost - self.start[1]) / packets)
        self.start = (sent, lost)
        return fraction


class TwccWindows:
    """GStreamer's TWCC stats cover one feedback packet's window (~10 video packets, 100 ms): too few to judge, as a
    frame's burst alone can make one look slow. This sums the windows of a second, weighted by their packets."""

    def __init__(self, min_packets=30):
        self.min_packets = min_packets
        self.lock = threading.Lock()
        self.seen = False  # any feedback yet: a viewer may refuse the extension
        self.reset()

    def reset(self):
        self.packets = 0
        self.sums = dict.fromkeys(TWCC_SUMMED, 0)

    def add(self, window):
        n = window.get('packets-sent', 0)
        if n <= 0 or any(k not in window for k in self.sums):
            return
        with self.lock:
            self.seen = True
            self.packets += n
            for k in self.sums:
                self.sums[k] += window[k] * n

    def take(self):
        """The windows since the last take, as one ({'bitrate-sent', 'bitrate-recv', 'avg-delta-of-delta',
        'packets-sent'}), or None when they held fewer than min_packets packets."""
        with self.lock:
            packets, sums = self.packets, self.sums
            self.reset()
        if packets < self.min_packets:
            return None
        merged = {k: v / packets for k, v in sums.items()}
        merged['packets-sent'] = packets
        return merged


def queueing(twcc):
    """True when TWCC stats ({'bitrate-sent', 'bitrate-recv', 'avg-delta-of-delta'} in bit/s and ns) show a queue
    building: the window arrived clearly slower than it was sent and the gaps between packets grew."""
    sent, recv = twcc.get('bitrate-sent', 0), twcc.get('bitrate-recv', 0)
    return sent > 0 and recv > 0 and sent - recv > DELIVERY_SHORTFALL * sent and twcc.get('avg-delta-of-delta', 0) > 0


class RateControl:
    def __init__(self, quality='auto'):
        self.cap = QUALITY_KBPS[quality]
        self.kbps = self.cap
        self.hold = 0
        self.reason = 'start'
        self.twcc = TwccWindows()  # fed by viewerstats.watch_twcc; once feedback came, queueing comes from it alone

    def set_quality(self, quality):
        self.cap = QUALITY_KBPS[quality]
        self.kbps = self.cap
        self.reason = 'quality %s' % quality

    def update(self, loss=None, rtt_s=0.0):
        """One second's signals: `loss` a window's fraction (None while the window fills), the round trip, and the
        TWCC windows that came since the last update. True when the bitrate changed; `reason` then says why."""
        before = self.kbps
        twcc = self.twcc.take()
        if twcc is not None and queueing(twcc):
            arrived = twcc['bitrate-recv'] // 1000
            self.back_off(min(int(self.kbps * 0.85), int(arrived * 0.95)), 'queueing: %d kbit/s arrived of %d sent'
                          % (arrived, twcc['bitrate-sent'] // 1000))
        elif not self.twcc.seen and rtt_s > ROUND_TRIP_LIMIT:
            self.back_off(int(self.kbps * 0.85), 'round trip %.0f ms' % (rtt_s * 1000))
        elif loss is not None and loss > LOSS_HIGH:
            self.back_off(int(self.kbps * (1 - loss / 2)), 'loss %.1f%%' % (loss * 100))
        elif self.hold:
            self.hold -= 1
        elif (loss is None or loss < LOSS_LOW) and self.kbps < self.cap:
            self.kbps = min(self.cap, max(self.kbps + 20, int(self.kbps * PROBE_UP)))
            self.reason = 'probing up'
        return self.kbps != before

    def back_off(self, kbps, reason):
        self.kbps = max(MIN_KBPS, min(self.kbps, kbps))
        self.hold = HOLD_AFTER_BACKOFF
        self.reason = reason
