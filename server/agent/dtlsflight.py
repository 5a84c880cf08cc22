"""The agent's DTLS handshake in datagrams a link loses rarely, and a lost one sent again soon.

GStreamer 1.22's DTLS connection answers OpenSSL's MTU query with 0 (later releases say 1200), so OpenSSL falls back
to its smallest MTU and sends the agent's flight (server hello, certificate, key exchange, certificate request) in
256-byte datagrams: six where two would do. One of them lost, OpenSSL sends the flight again only after its first
retransmission timer, 1 s (RFC 6347's), and the viewer's first picture waits for it: at 0.5% loss one connect in three
of a bench stalled 1.2 s in DTLS (docs/benchmarks.md).

OpenSSL calls a program back for every SSL object it makes (SSL_get_ex_new_index's new_func, run at the end of
SSL_new, once the object's DTLS state exists). There this module gives each DTLS object a link MTU of 1,200 bytes (what
browsers' WebRTC stacks send in; any path that carries the media carries it) with OpenSSL told not to ask the BIO
again, and a first retransmission timer of FIRST_RESEND_US, doubled at each resend up to OpenSSL's own 60 s.
Nothing else in the agent's process makes SSL objects; a TLS one is left as it is.
"""
import ctypes

LINK_MTU = 1200
FIRST_RESEND_US = 250_000
MAX_RESEND_US = 60_000_000
_SSL_OP_NO_QUERY_MTU = 0x00001000
_DTLS_CTRL_SET_LINK_MTU = 120
_CRYPTO_EX_INDEX_SSL = 0

_p = ctypes.c_void_p
# void new_func(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
_EX_NEW = ctypes.CFUNCTYPE(None, _p, _p, _p, ctypes.c_int, ctypes.c_long, _p)
# unsigned int timer_cb(SSL *s, unsigned int timer_us)
_TIMER = ctypes.CFUNCTYPE(ctypes.c_uint, _p, ctypes.c_uint)
_KEPT = []  # the callbacks, for the process's life


def next_resend_us(previous_us):
    """The retransmission timer: FIRST_RESEND_US for a flight's first send (OpenSSL passes 0), then doubled."""
    if previous_us == 0:
        return FIRST_RESEND_US
    return min(previous_us * 2, MAX_RESEND_US)


def _libs():
    ssl = ctypes.CDLL('libssl.so.3')
    crypto = ctypes.CDLL('libcrypto.so.3')
    crypto.CRYPTO_get_ex_new_index.restype = ctypes.c_int
    crypto.CRYPTO_get_ex_new_index.argtypes = [ctypes.c_int, ctypes.c_long, _p, _EX_NEW, _p, _p]
    ssl.SSL_is_dtls.restype = ctypes.c_int
    ssl.SSL_is_dtls.argtypes = [_p]
    ssl.SSL_set_options.restype = ctypes.c_uint64
    ssl.SSL_set_options.argtypes = [_p, ctypes.c_uint64]
    ssl.SSL_ctrl.restype = ctypes.c_long
    ssl.SSL_ctrl.argtypes = [_p, ctypes.c_int, ctypes.c_long, _p]
    ssl.DTLS_set_timer_cb.restype = None
    ssl.DTLS_set_timer_cb.argtypes = [_p, _TIMER]
    return ssl, crypto


def install(log=lambda *a: None):
    """Applies the MTU and the timer to every DTLS object made from now on in this process. True once installed."""
    try:
        ssl, crypto = _libs()
    except (OSError, AttributeError) as e:
        log('DTLS flight: OpenSSL as it is (%s)' % e)
        return False
    timer = _TIMER(lambda _s, previous: next_resend_us(previous))

    def made(parent, _ptr, _ad, _idx, _argl, _argp):
        # An exception here would only be printed: OpenSSL goes on with the object as it is either way.
        if not parent or ssl.SSL_is_dtls(parent) != 1:
            return
        ssl.SSL_set_options(parent, _SSL_OP_NO_QUERY_MTU)
        ssl.SSL_ctrl(parent, _DTLS_CTRL_SET_LINK_MTU, LINK_MTU, None)
        ssl.DTLS_set_timer_cb(parent, timer)

    callback = _EX_NEW(made)
    if crypto.CRYPTO_get_ex_new_index(_CRYPTO_EX_INDEX_SSL, 0, None, callback, None, None) < 0:
        log('DTLS flight: OpenSSL as it is (no ex_data index)')
        return False
    _KEPT.append((callback, timer))
    log('DTLS flight: datagrams of up to %d bytes, the first resend after %d ms' % (LINK_MTU, FIRST_RESEND_US // 1000))
    return True
