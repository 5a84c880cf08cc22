"""The agent's DTLS key, kept from one start of its desktop to the next.

GStreamer 1.22's DTLS makes a new RSA-2048 key when the process's first DTLS decoder is made, and takes no key from
outside before that. The key costs 0.2-0.3 s of CPU on a 2-core Xeon: a class's 40 desktops starting together paid it
40 times on the same cores, and a viewer who came right after a start waited for it. OpenSSL lets a program replace
how new RSA objects generate their key (RSA_METHOD's keygen, OpenSSL 1.1 and 3.x): while the decoder is made, the
generation is this module's, which returns the key the last start saved (made and saved the first time, and again
once it is KEY_DAYS old). GStreamer still wraps it in a new certificate at each start.

The key file is in the desktop user's home, readable by that user only: the agent is that user's process, the key
guards only that user's own stream, and a course seat that moves to another student moves with the home. Anything
wrong with the file (missing, unreadable, not a 2048-bit RSA key, a full disk when saving) means a new key, as
before; it never stops the agent.
"""
import ctypes
import os
import time

KEY_DAYS = 30
BITS = 2048

_p = ctypes.c_void_p
_KEYGEN = ctypes.CFUNCTYPE(ctypes.c_int, _p, ctypes.c_int, _p, _p)
_SIGNATURES = {
    'RSA_get_default_method': (_p, []),
    'RSA_PKCS1_OpenSSL': (_p, []),
    'RSA_meth_dup': (_p, [_p]),
    'RSA_meth_free': (None, [_p]),
    'RSA_meth_set_keygen': (ctypes.c_int, [_p, _KEYGEN]),
    'RSA_set_default_method': (None, [_p]),
    'RSA_set_method': (ctypes.c_int, [_p, _p]),
    'RSA_new': (_p, []),
    'RSA_free': (None, [_p]),
    'RSA_bits': (ctypes.c_int, [_p]),
    'RSA_generate_key_ex': (ctypes.c_int, [_p, ctypes.c_int, _p, _p]),
    'RSA_get0_key': (None, [_p, ctypes.POINTER(_p), ctypes.POINTER(_p), ctypes.POINTER(_p)]),
    'RSA_get0_factors': (None, [_p, ctypes.POINTER(_p), ctypes.POINTER(_p)]),
    'RSA_get0_crt_params': (None, [_p, ctypes.POINTER(_p), ctypes.POINTER(_p), ctypes.POINTER(_p)]),
    'RSA_set0_key': (ctypes.c_int, [_p, _p, _p, _p]),
    'RSA_set0_factors': (ctypes.c_int, [_p, _p, _p]),
    'RSA_set0_crt_params': (ctypes.c_int, [_p, _p, _p, _p]),
    'BN_dup': (_p, [_p]),
    'BIO_new_mem_buf': (_p, [ctypes.c_char_p, ctypes.c_int]),
    'BIO_new': (_p, [_p]),
    'BIO_s_mem': (_p, []),
    'BIO_ctrl': (ctypes.c_long, [_p, ctypes.c_int, ctypes.c_long, _p]),
    'BIO_free': (ctypes.c_int, [_p]),
    'PEM_read_bio_RSAPrivateKey': (_p, [_p, _p, _p, _p]),
    'PEM_write_bio_RSAPrivateKey': (ctypes.c_int, [_p, _p, _p, _p, ctypes.c_int, _p, _p]),
}
_BIO_CTRL_INFO = 3
_KEPT = []  # each hook's method and callback, for the process's life


def _crypto():
    lib = ctypes.CDLL('libcrypto.so.3')
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def _fresh(path, now):
    try:
        return now - os.stat(path).st_mtime < KEY_DAYS * 86400
    except OSError:
        return False


def _read_key(c, path):
    """The saved key as a new RSA object (OpenSSL's own method), or None."""
    try:
        with open(path, 'rb') as f:
            pem = f.read(16384)
    except OSError:
        return None
    bio = c.BIO_new_mem_buf(pem, len(pem))
    rsa = c.PEM_read_bio_RSAPrivateKey(bio, None, None, None) if bio else None
    c.BIO_free(bio)
    if rsa and c.RSA_bits(rsa) != BITS:
        c.RSA_free(rsa)
        rsa = None
    return rsa


def _new_key(c, e):
    rsa = c.RSA_new()
    c.RSA_set_method(rsa, c.RSA_PKCS1_OpenSSL())
    if not c.RSA_generate_key_ex(rsa, BITS, e, None):
        c.RSA_free(rsa)
        return None
    return rsa


def _save_key(c, rsa, path):
    bio = c.BIO_new(c.BIO_s_mem())
    try:
        if not c.PEM_write_bio_RSAPrivateKey(bio, rsa, None, None, 0, None, None):
            return
        data = ctypes.c_char_p()
        n = c.BIO_ctrl(bio, _BIO_CTRL_INFO, 0, ctypes.byref(data))
        pem = ctypes.string_at(data, n)
    finally:
        c.BIO_free(bio)
    tmp = '%s.%d.tmp' % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, 'wb') as f:
            f.write(pem)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _copy_key(c, src, dst):
    """src's numbers into dst, which owns its copies."""
    n, e, d, p, q, dp, dq, qi = (_p() for _ in range(8))
    c.RSA_get0_key(src, ctypes.byref(n), ctypes.byref(e), ctypes.byref(d))
    c.RSA_get0_factors(src, ctypes.byref(p), ctypes.byref(q))
    c.RSA_get0_crt_params(src, ctypes.byref(dp), ctypes.byref(dq), ctypes.byref(qi))
    dup = c.BN_dup
    return bool(c.RSA_set0_key(dst, dup(n), dup(e), dup(d)) and c.RSA_set0_factors(dst, dup(p), dup(q))
                and c.RSA_set0_crt_params(dst, dup(dp), dup(dq), dup(qi)))


def with_kept_key(path, make, log=lambda *a: None):
    """Calls make() (which makes GStreamer's first DTLS decoder) with RSA key generation answered from `path`.
    Returns 'kept', 'new' or 'unchanged' (OpenSSL without these calls: GStreamer made its own key)."""
    try:
        c = _crypto()
    except (OSError, AttributeError) as e:
        log('DTLS key: not kept (%s)' % e)
        make()
        return 'unchanged'
    outcome = ['unchanged']
    now = time.time()

    def keygen(rsa, bits, e, _cb):
        # Whatever goes wrong here, GStreamer gets a key (an exception would reach OpenSSL as a failed one).
        try:
            src = _read_key(c, path) if bits == BITS and _fresh(path, now) else None
            outcome[0] = 'kept' if src else 'new'
            if not src:
                src = _new_key(c, e)
                if not src:
                    return 0
                if bits == BITS:
                    _save_key(c, src, path)
            ok = _copy_key(c, src, rsa)
            c.RSA_free(src)
            c.RSA_set_method(rsa, c.RSA_PKCS1_OpenSSL())
            return 1 if ok else 0
        except Exception as err:  # noqa: BLE001
            log('DTLS key: not kept (%s)' % err)
            c.RSA_set_method(rsa, c.RSA_PKCS1_OpenSSL())
            return c.RSA_generate_key_ex(rsa, bits, e, None)

    callback = _KEYGEN(keygen)
    default = c.RSA_get_default_method()
    method = c.RSA_meth_dup(default)
    c.RSA_meth_set_keygen(method, callback)
    c.RSA_set_default_method(method)
    try:
        make()
    finally:
        c.RSA_set_default_method(default)
    # The method stays allocated: an RSA object made meanwhile on another thread may still point at it.
    _KEPT.append((method, callback))
    return outcome[0]
