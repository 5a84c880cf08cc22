"""What the rate control reads from webrtcbin: get-stats' running totals of packets sent and of packets the viewer
reports lost and its round trip, and the RTP session's TWCC windows.

Each stat is a structure named by its id (rtp-remote-inbound-stream-stats_<ssrc>, …); its kind is the 'type' field.
"""
import gi

gi.require_version('GstWebRTC', '1.0')
from gi.repository import Gst, GstWebRTC  # noqa: E402
from ratecontrol import TWCC_SUMMED  # noqa: E402

TWCC_FIELDS = TWCC_SUMMED + ('packets-sent',)


def _number(st, field):
    if not st.has_field(field):
        return None
    value = st.get_value(field)
    return value if isinstance(value, (int, float)) else None


def read_stats(reply):
    """{'sent', 'lost', 'rtt'}: totals over video and sound ('lost' only once a receiver report came) and the worse
    round trip of the two."""
    found = {}

    def add(key, value):
        if value is not None:
            found[key] = found.get(key, 0) + value

    def each(_field, st, _u):
        if not isinstance(st, Gst.Structure):
            return True
        kind = st.get_value('type')
        if kind == GstWebRTC.WebRTCStatsType.OUTBOUND_RTP:
            add('sent', _number(st, 'packets-sent'))
        elif kind == GstWebRTC.WebRTCStatsType.REMOTE_INBOUND_RTP:
            add('lost', _number(st, 'packets-lost'))
            rtt = _number(st, 'round-trip-time')
            if rtt is not None:
                found['rtt'] = max(rtt, found.get('rtt', 0.0))
        return True

    reply.foreach(each, None)
    return found


def watch_twcc(webrtc, windows):
    """Feeds `windows` (ratecontrol.TwccWindows) each TWCC window the RTP session computes from the viewer's feedback
    (GStreamer 1.22 keeps them on the session, not in get-stats). False while webrtcbin has no session yet."""
    rtpbin = webrtc.get_by_name('rtpbin')
    session = rtpbin.emit('get-session', 0) if rtpbin else None
    if session is None or not session.find_property('twcc-stats'):
        return False

    def on_window(obj, _pspec):
        st = obj.get_property('twcc-stats')
        if isinstance(st, Gst.Structure):
            windows.add({f: v for f, v in ((f, _number(st, f)) for f in TWCC_FIELDS) if v is not None})

    session.connect('notify::twcc-stats', on_window)
    return True
