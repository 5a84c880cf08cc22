"""The agent's ICE-TCP candidates go to the viewer only when UDP has not connected within HOLD_S.

libnice gathers a passive TCP candidate beside the UDP one, and a browser behind a firewall that drops UDP reaches
the desktop through it (stream-fallback.test.ts: without TCP the tab falls back to VNC). Offered at once, it also wins
where UDP works: the agent is ICE's controlling side, and libnice nominates as soon as any host-host pair is valid,
the best valid one at that moment; a UDP check lost or late (0.5% loss, a busy host) leaves the TCP pair the only
valid one (bench:stream on a 2-core host: the media went over TCP in one run of three). Media over TCP stalls a
frame behind every lost segment's retransmission and queues behind TCP's own congestion window: real-time video
wants UDP wherever UDP gets through. So the agent holds its TCP candidates back and sends them HOLD_S after the
viewer's answer, only if ICE has not connected by then: on UDP one or two round trips for the checks, well inside
it on any link the spec's users have (counted from the answer, where the checks start: a busy host's tab answered
1.4 s after the offer in a .ci/run). The tab's own fallback to VNC waits 5 s after the offer
for an answered check, which leaves TCP the time to connect.

No GLib here: the rule runs in plain python3 for its test; peer.py wires it to webrtcbin and a GLib timer.
"""
import threading

HOLD_S = 1.0


def is_tcp(candidate):
    """'candidate:1 1 TCP 1015021823 10.0.0.2 9 typ host tcptype active' names TCP in its third field."""
    parts = candidate.split() if isinstance(candidate, str) else []
    return len(parts) > 2 and parts[2].lower() == 'tcp'


class TcpHold:
    """Which of the agent's candidates go to the viewer now, and which wait for `release`."""

    def __init__(self):
        self.lock = threading.Lock()  # candidates come on webrtcbin's thread, the release on the main loop
        self.held = []
        self.released = False

    def offer(self, mline, candidate):
        """True when the candidate goes to the viewer now; False when it is held."""
        if not is_tcp(candidate):
            return True
        with self.lock:
            if not self.released:
                self.held.append((mline, candidate))
            return self.released

    def release(self, connected):
        """The hold is over: the held candidates to send now, none when ICE connected meanwhile (over UDP: TCP had
        none to use). A TCP candidate gathered later goes at once."""
        with self.lock:
            held, self.held, self.released = self.held, [], True
        return [] if connected else held
