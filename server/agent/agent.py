#!/usr/bin/python3
"""Hyperdesk streaming agent: one desktop as WebRTC video (GStreamer webrtcbin), input over a data channel.

Run with Debian's /usr/bin/python3 (it has gi and GStreamer):
  agent.py --display :N --xauthority FILE --socket PATH [--pulse-server unix:PATH]
Signaling arrives ONLY over the Unix socket (mode 0600; the server's gateway is its one client) as newline-delimited
JSON. The gateway sends `config` (ICE servers) then the browser's `start` (codecs it decodes); the agent answers with
an `offer`, takes the `answer` and `ice` messages and sends its own `ice`. A new connection replaces the old one
(which gets `replaced` first, so its tab does not take the stream back); a closed connection tears the peer down.
"""
import argparse
import ctypes
import gc
import json
import os
import socket
import sys
import threading
import time

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstWebRTC', '1.0')
gi.require_version('GstSdp', '1.0')
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clipwatch import ClipboardWatch  # noqa: E402
from framegate import FrameGate  # noqa: E402
import dtlsflight  # noqa: E402
import dtlskey  # noqa: E402
import guard  # noqa: E402
from peer import Peer  # noqa: E402
from xinput import XInput  # noqa: E402
from xscreen import XScreen  # noqa: E402

MAX_LINE = 256 * 1024


STARTED = time.monotonic()

_libc = ctypes.CDLL('libc.so.6')
M_MMAP_THRESHOLD = -3


def log(*a):
    print('agent: [%.2fs]' % (time.monotonic() - STARTED), *a, file=sys.stderr, flush=True)


def probe_encoders():
    """Which H.264 encoder works here: NVENC when the element exists and can open a session, else x264."""
    if Gst.ElementFactory.find('nvh264enc'):
        try:
            p = Gst.parse_launch('videotestsrc num-buffers=2 ! nvh264enc ! fakesink')
            p.set_state(Gst.State.PLAYING)
            msg = p.get_bus().timed_pop_filtered(5 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
            p.set_state(Gst.State.NULL)
            if msg and msg.type == Gst.MessageType.EOS:
                return 'nvh264enc'
        except GLib.Error:
            pass
    return 'x264enc'


def prewarm(dtls_key):
    """Makes the DTLS certificate and loads the plugins a viewer's pipeline needs now, while the desktop starts, not
    when the first viewer comes. The certificate first, on its own thread: its RSA key, when it must be made (up to
    1.5 s on a busy host), is the slow part, and a viewer's offer waits for it."""
    threading.Thread(target=make_dtls_certificate, args=(dtls_key,), daemon=True).start()
    for name in ('ximagesrc', 'videoconvert', 'x264enc', 'vp8enc', 'rtph264pay', 'rtpvp8pay', 'webrtcbin', 'nicesrc', 'dtlssrtpenc',
                 'opusenc', 'pulsesrc'):
        Gst.ElementFactory.make(name, None)


def make_dtls_certificate(dtls_key):
    """GStreamer's DTLS makes its certificate (and an RSA key) when the process's first DTLS decoder is made, and
    keeps it for the process's life: made here, beside the desktop's start, instead of inside the first viewer's
    connection (a viewer that comes meanwhile waits for this one, never makes a second). With --dtls-key the key is
    the one the last start kept there (dtlskey.py)."""
    t0 = time.monotonic()
    if dtls_key:
        key = dtlskey.with_kept_key(dtls_key, make_dtls_decoder, log)
    else:
        make_dtls_decoder()
        key = 'new'
    log('DTLS certificate made in %.0f ms (%s key)' % ((time.monotonic() - t0) * 1000, key))


def make_dtls_decoder():
    Gst.ElementFactory.make('dtlssrtpdec', None)


def probe_pulse(server):
    """Whether the desktop's sound server answers on its socket: a plain connect (a GStreamer probe pipeline took
    1.4 s here, and the viewer's offer waited for it)."""
    if not server.startswith('unix:'):
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.5)
    try:
        s.connect(server[5:])
        return True
    except OSError:
        return False
    finally:
        s.close()


class Agent:
    def __init__(self, args):
        self.args = args
        # Buffers of 256 KiB and more (frames) straight from the system and back to it when freed: glibc otherwise
        # raises this threshold as such buffers are freed, and kept ended viewers' frames in its arenas (the agent
        # grew to 850 MB over 150 reloads of a tab; 84-91 MB throughout 225 with this).
        _libc.mallopt(M_MMAP_THRESHOLD, 256 * 1024)
        self.h264 = probe_encoders()
        log('H.264 encoder:', self.h264)
        self.input = XInput(args.display)
        try:
            self.screen = XScreen(args.display, args.screen)
        except (OSError, RuntimeError) as e:
            self.screen = None
            log('desktop size stays fixed:', e)
        self.log_fn = log
        try:
            self.clip_watch = ClipboardWatch(args.display, self.clipboard_changed)
        except (OSError, RuntimeError) as e:
            self.clip_watch = None
            log('clipboard looked at every 0.7 s:', e)
        try:
            self.gate = FrameGate(args.display)
        except (OSError, RuntimeError) as e:
            self.gate = None
            log('every grabbed frame encoded:', e)
        self.audio_ok = bool(args.pulse_server) and probe_pulse(args.pulse_server)
        if args.pulse_server:
            log('audio:', 'on' if self.audio_ok else 'pulse server unreachable, video only')
        self.conn = None
        self.peer = None
        self.ice_servers = []
        self.send_lock = threading.Lock()
        # This machine's own addresses: no ICE server or remote candidate may point back at it.
        self.own = guard.own_addresses()
        self.starts = None

    def serve(self, srv):
        while True:
            conn, _ = srv.accept()
            GLib.idle_add(self.replace, conn)

    def replace(self, conn):
        """A new signaling connection: the old viewer (if any) is told so and ended first."""
        self.close_peer()
        if self.conn:
            self.send(self.conn, {'type': 'replaced'})
            try:
                self.conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.conn = conn
        self.ice_servers = []
        self.starts = guard.Budget(guard.RENEGOTIATE_BURST, guard.RENEGOTIATE_EVERY_S)
        threading.Thread(target=self.read, args=(conn,), daemon=True).start()
        return False

    def read(self, conn):
        buf = b''
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                buf += chunk
                if len(buf) > MAX_LINE and b'\n' not in buf:
                    break
                while b'\n' in buf:
                    line, buf = buf.split(b'\n', 1)
                    try:
                        msg = json.loads(line)
                    except (ValueError, RecursionError):
                        continue
                    if isinstance(msg, dict):
                        GLib.idle_add(self.handle, conn, msg)
        except OSError:
            pass
        GLib.idle_add(self.gone, conn)

    def gone(self, conn):
        if conn is self.conn:
            self.close_peer()
            self.conn = None
        conn.close()
        return False

    def end_viewer(self, conn):
        """Ends a viewer's signaling connection (its reader then tears the peer down): the gateway tells the tab, which
        connects again."""
        if conn is self.conn:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def send(self, conn, msg):
        data = (json.dumps(msg) + '\n').encode()
        with self.send_lock:
            try:
                conn.sendall(data)
            except OSError:
                pass

    def clipboard_changed(self):
        if self.peer:
            self.peer.clipboard.read()

    def close_peer(self):
        if self.peer:
            self.peer.close()
            self.peer = None
            # The Peer's own cycles (its helpers hold its methods) and with them its pipeline and webrtcbin's two
            # threads: freed now, not at some later full collection.
            t0 = time.monotonic()
            gc.collect()
            _libc.malloc_trim(0)  # and what the pipeline freed below that threshold, back to the system
            log('viewer ended, its pipeline freed in %.0f ms' % ((time.monotonic() - t0) * 1000))
            self.input.release_all()
            if self.screen:
                self.screen.resize(*self.screen.max)  # the next viewer (or VNC) starts from the full desktop

    def handle(self, conn, msg):
        if conn is not self.conn:
            return False
        try:
            self.dispatch(conn, msg)
        except Exception as e:  # noqa: BLE001 (a signaling message must never end the agent's main loop)
            log('signaling message dropped: %s: %s' % (type(e).__name__, str(e)[:120]))
        return False

    def dispatch(self, conn, msg):
        t = msg.get('type')
        if t == 'config':
            servers = msg.get('iceServers', [])
            self.ice_servers = [s for s in servers[:8] if isinstance(s, dict)] if isinstance(servers, list) else []
        elif t == 'start':
            if not self.starts.take():
                log('viewer restart refused: more than %d in a row (one every %.0f s after that)' % (guard.RENEGOTIATE_BURST, guard.RENEGOTIATE_EVERY_S))
                return
            self.close_peer()
            if self.args.pulse_server and not self.audio_ok:
                # The sound server may have come up after this agent: look again for each viewer.
                self.audio_ok = probe_pulse(self.args.pulse_server)
                log('audio:', 'on' if self.audio_ok else 'still unreachable, this viewer gets video only')
            asked = msg.get('codecs', [])
            codecs = [c for c in (asked if isinstance(asked, list) else []) if c in ('h264', 'vp8')] or ['vp8']
            self.peer = Peer(self, conn, codecs[0], msg)
        elif self.peer and t == 'answer' and isinstance(msg.get('sdp'), str):
            self.peer.answer(msg['sdp'])
        elif self.peer and t == 'ice':
            self.peer.add_ice(msg.get('candidate', ''), msg.get('sdpMLineIndex', 0))


def listen(path):
    """The signaling socket, 0600 from the start (the server's gateway, root, is its only other client)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    srv.bind(path)
    os.umask(old)
    srv.listen(4)
    log('listening on', path)
    return srv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--display', required=True)
    ap.add_argument('--xauthority', default='')
    ap.add_argument('--socket', required=True)
    ap.add_argument('--pulse-server', default='')
    ap.add_argument('--screen', default='1920x1080', help="the desktop's full size, the most the viewer's tab can ask for")
    ap.add_argument('--dtls-key', default='', help='a file to keep the DTLS key in from one start to the next')
    args = ap.parse_args()
    os.environ['DISPLAY'] = args.display
    if args.xauthority:
        os.environ['XAUTHORITY'] = args.xauthority
    # Listen first: the server reports the desktop ready once this socket exists, and a viewer that connects while
    # the encoders are probed waits in the backlog (its messages are handled once the main loop runs).
    srv = listen(args.socket)
    Gst.init(None)
    # Before the first DTLS object: its handshake in 1,200-byte datagrams, a lost one sent again after 250 ms.
    dtlsflight.install(log)
    prewarm(args.dtls_key)
    agent = Agent(args)
    threading.Thread(target=agent.serve, args=(srv,), daemon=True).start()
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
