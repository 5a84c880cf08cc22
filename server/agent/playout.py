"""The playout-delay RTP header extension on the video (http://www.webrtc.org/experiments/rtp-hdrext/playout-delay).

Chrome's receiver keeps a jitter buffer sized by its own jitter estimate, which a large keyframe on a 2 Mbit/s link
pushes to ~200 ms. A playout delay of min 0 / max 0 (the value meant for games and remote desktops) makes it render
each frame as soon as it is decoded. GStreamer has no element for it: a GstRtp.RTPHeaderExtension subclass on the
payloader puts its extmap in the payloader's caps (webrtcbin offers it from there) and its 3 bytes in each packet.

PyGObject hands write() a copy of the packet's extension bytes, so Python cannot set them there: the payloader
reserves the 3 bytes (and offers the extmap), and a probe on its src pad, in C through ctypes (no Python wrapper
holds the packet, so it stays writable), writes min/max into each packet in place.
"""
import ctypes

import gi

gi.require_version('GstRtp', '1.0')
from gi.repository import GstRtp  # noqa: E402

from gobjectptr import pointer_of  # noqa: E402

URI = 'http://www.webrtc.org/experiments/rtp-hdrext/playout-delay'

# By soname: ctypes.util.find_library runs `ldconfig -p` in a child process, 7 of them at each desktop's start.
_gst = ctypes.CDLL('libgstreamer-1.0.so.0')
_rtp = ctypes.CDLL('libgstrtp-1.0.so.0')
_P = ctypes.c_void_p
_PROBE = ctypes.CFUNCTYPE(ctypes.c_int, _P, _P, _P)
_gst.gst_pad_add_probe.argtypes = [_P, ctypes.c_int, _PROBE, _P, _P]
_gst.gst_pad_add_probe.restype = ctypes.c_ulong
_gst.gst_buffer_list_length.argtypes = [_P]
_gst.gst_buffer_list_length.restype = ctypes.c_uint
_gst.gst_buffer_list_get.argtypes = [_P, ctypes.c_uint]
_gst.gst_buffer_list_get.restype = _P
_rtp.gst_rtp_buffer_map.argtypes = [_P, ctypes.c_int, _P]
_rtp.gst_rtp_buffer_unmap.argtypes = [_P]
_rtp.gst_rtp_buffer_get_extension_onebyte_header.argtypes = [_P, ctypes.c_ubyte, ctypes.c_uint, ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_uint)]

_BUFFER, _BUFFER_LIST = 1 << 4, 1 << 5  # GST_PAD_PROBE_TYPE_BUFFER / _BUFFER_LIST
_READWRITE = 3
_OK = 1  # GST_PAD_PROBE_OK


class _ProbeInfo(ctypes.Structure):
    _fields_ = [('type', ctypes.c_int), ('id', ctypes.c_ulong), ('data', _P)]


class PlayoutDelay(GstRtp.RTPHeaderExtension):
    def __init__(self):
        super().__init__()
        self.set_uri(URI)

    def do_get_supported_flags(self):
        return GstRtp.RTPHeaderExtensionFlags.ONE_BYTE

    def do_get_max_size(self, _meta):
        return 3

    def do_write(self, _meta, _flags, _output, _data, _size):
        return 3  # the bytes themselves are written by the probe (see above)

    def do_read(self, _flags, _data, _size, _buffer):
        return True


def _encode(min_ms, max_ms):
    lo, hi = min(4095, max(0, min_ms // 10)), min(4095, max(0, max_ms // 10))
    return bytes([lo >> 4, ((lo & 0x0F) << 4) | (hi >> 8), hi & 0xFF])


def add_to(payloader, ext_id, min_ms=0, max_ms=0):
    """Adds the extension (one-byte id `ext_id`) with min/max playout delay in ms to a payloader; returns what keeps
    the probe alive (hold on to it while the pipeline runs), or None when this GStreamer cannot."""
    try:
        ext = PlayoutDelay()
        ext.set_id(ext_id)
        payloader.emit('add-extension', ext)
    except (TypeError, AttributeError):
        return None
    value = _encode(min_ms, max_ms)
    rtp = ctypes.create_string_buffer(512)  # a GstRTPBuffer (far smaller), reused: the probe runs on one thread
    data, size = _P(), ctypes.c_uint()

    def write(buf):
        ctypes.memset(rtp, 0, 512)
        if not _rtp.gst_rtp_buffer_map(buf, _READWRITE, rtp):
            return
        if _rtp.gst_rtp_buffer_get_extension_onebyte_header(rtp, ext_id, 0, ctypes.byref(data), ctypes.byref(size)) and size.value >= 3:
            ctypes.memmove(data.value, value, 3)
        _rtp.gst_rtp_buffer_unmap(rtp)

    def probe(_pad, info_p, _user):
        info = ctypes.cast(info_p, ctypes.POINTER(_ProbeInfo)).contents
        if info.type & _BUFFER_LIST:
            for i in range(_gst.gst_buffer_list_length(info.data)):
                write(_gst.gst_buffer_list_get(info.data, i))
        elif info.type & _BUFFER:
            write(info.data)
        return _OK

    cb = _PROBE(probe)
    pad = payloader.get_static_pad('src')
    _gst.gst_pad_add_probe(pointer_of(pad), _BUFFER | _BUFFER_LIST, cb, None, None)
    return (ext, cb)
