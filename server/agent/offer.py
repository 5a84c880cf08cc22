"""What the agent changes in webrtcbin's offer before the viewer's browser gets it (webrtcbin keeps its own copy).

- rtx-time on each RTX format (webrtcbin leaves it out): the browser asks for a lost packet again, or for a keyframe,
  after RTX_TIME_MS instead of its own, far longer, default.
- a=setup:active instead of actpass: the agent opens DTLS and the browser answers passive. As the DTLS server the
  agent dropped the browser's first ClientHello: the browser sends it as soon as its own ICE check is answered, but
  webrtcbin starts DTLS only once the agent's ICE is connected too (its transportsendbin), a round trip later, and
  the browser sent it again only after about 100 ms. As the client the agent sends its ClientHello the moment its ICE
  connects, and a browser that gets it before its own side is ready keeps it. webrtcbin's own description stays
  actpass; with the answer's passive it becomes the client (its _get_final_setup).
"""
import re

RTX_TIME_MS = 125


def with_rtx_time(sdp):
    if 'rtx-time=' in sdp:
        return re.sub(r'rtx-time=\d+', 'rtx-time=%d' % RTX_TIME_MS, sdp)
    return re.sub(r'(a=fmtp:\d+ apt=\d+)', r'\1;rtx-time=%d' % RTX_TIME_MS, sdp)


def as_dtls_client(sdp):
    return sdp.replace('a=setup:actpass', 'a=setup:active')


def as_sent(sdp):
    """The offer as the browser gets it."""
    return as_dtls_client(with_rtx_time(sdp))
