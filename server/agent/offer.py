"""What the agent changes in webrtcbin's offer before the viewer's browser gets it (webrtcbin keeps its own copy).

- rtx-time on each RTX format (webrtcbin leaves it out): the browser asks for a lost packet again, or for a keyframe,
  after RTX_TIME_MS instead of its own, far longer, default.

It leaves DTLS's roles as webrtcbin offers them (actpass: the browser answers active and opens DTLS). Tried the
other way (a=setup:active, the agent opening DTLS), measured and reverted: GStreamer 1.22's DTLS BIO answers
OpenSSL's MTU query with 0, so OpenSSL cuts every handshake message into 256-byte datagrams and the agent's
ClientHello goes out in two; a browser that gets it before its own side of DTLS has started keeps one datagram
of it (Chrome caches a single early ClientHello packet), the handshake then waits for OpenSSL's first
retransmission, 1 s later (two connects of five on a 2-core EPYC VM: ICE → DTLS 640 ms and 1.23 s, against about 170 ms).
As it is, the browser's first ClientHello comes before the agent's ICE is connected (webrtcbin starts DTLS only
then, and the agent's ICE is connected only once its own checks are answered, after the browser's) and is dropped;
the browser sends it again about 100 ms later, as every capture showed. ARCHITECTURE.md, "Latency".
Tried again once the agent's handshake went out in 1,200-byte datagrams (dtlsflight.py), its hello in one: no gain on
the wire (from the moment the agent's ICE is connected the handshake takes as many round trips either way), so it
stays as it is.
"""
import re

RTX_TIME_MS = 125


def with_rtx_time(sdp):
    if 'rtx-time=' in sdp:
        return re.sub(r'rtx-time=\d+', 'rtx-time=%d' % RTX_TIME_MS, sdp)
    return re.sub(r'(a=fmtp:\d+ apt=\d+)', r'\1;rtx-time=%d' % RTX_TIME_MS, sdp)
