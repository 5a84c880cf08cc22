"""libnice's connectivity checks paced every 5 ms instead of 20, for a sooner first frame.

The agent offers, so its libnice is the controlling side, and webrtcbin has it nominate the regular way: a check, and
once that succeeds a second check that nominates the pair, each sent on a later tick of the pacing timer. webrtcbin
starts DTLS only once the pair is nominated, so the viewer's first DTLS hello, sent as soon as its own check
succeeded, waits in the agent until then; Chrome sends it again 100 ms later (a packet capture on a 40 ms path: the
agent's nomination done 140 ms after the viewer's first check came, about when the hello is sent again). At 5 ms a
tick the nomination is done about 95 ms after the viewer's first check, and the agent answers the first hello.

webrtcbin offers no setting for it; the NiceAgent is reached through GObject's C API (the Python binding of the ICE
object holds no Nice typelib).
"""
import ctypes

from gobjectptr import pointer_of

PACING_MS = 5

_go = ctypes.CDLL('libgobject-2.0.so.0')
_P = ctypes.c_void_p
_go.g_object_get.argtypes = [_P, ctypes.c_char_p, _P, _P]
_go.g_object_set.argtypes = [_P, ctypes.c_char_p, ctypes.c_uint, _P]
_go.g_object_unref.argtypes = [_P]


def _object_property(obj, name):
    out = _P()
    _go.g_object_get(obj, name, ctypes.byref(out), None)
    return out


def _with_nice_agent(webrtcbin, use):
    """use(the NiceAgent's pointer) for webrtcbin's libnice agent, and its result; None where there is none."""
    ice = _object_property(pointer_of(webrtcbin), b'ice-agent')
    if not ice.value:
        return None
    try:
        agent = _object_property(ice, b'agent')
        if not agent.value:
            return None
        try:
            return use(agent)
        finally:
            _go.g_object_unref(agent)
    finally:
        _go.g_object_unref(ice)


def _set_pacing(agent, ms):
    _go.g_object_set(agent, b'stun-pacing-timer', ms, None)
    return True


def _get_pacing(agent):
    out = ctypes.c_uint()
    _go.g_object_get(agent, b'stun-pacing-timer', ctypes.byref(out), None)
    return out.value


def pace_checks(webrtcbin, ms=PACING_MS):
    """Sets the pacing of webrtcbin's libnice agent; False where this GStreamer has no such agent."""
    return _with_nice_agent(webrtcbin, lambda agent: _set_pacing(agent, ms)) is True


def pacing(webrtcbin):
    """The pacing of webrtcbin's libnice agent in ms, or None."""
    return _with_nice_agent(webrtcbin, _get_pacing)
