"""One viewer: the GStreamer pipeline into webrtcbin, its data channel 'input', rate control and clipboard.

Tuned for key → photon on a 2 Mbit/s link (ARCHITECTURE.md, "Latency"): no periodic keyframes (an IDR when the media
path connects and when the viewer asks with PLI/FIR), a VBV of 1.5 frame intervals so no frame bursts the link,
sliced threads (at most 4 slices: Chrome's decoder), NACK/RTX with a short rtx-time, and the playout-delay header
extension at min 0 / max 0 so Chrome renders each frame as soon as it is decoded.
"""
import json
import os
import threading
import time
from urllib.parse import quote

import gi

gi.require_version('GstVideo', '1.0')
from gi.repository import GLib, Gst, GstSdp, GstVideo, GstWebRTC  # noqa: E402

import guard  # noqa: E402
import icepace  # noqa: E402
import playout  # noqa: E402
import rtxcopy  # noqa: E402
import tcphold  # noqa: E402
from offer import with_rtx_time  # noqa: E402
from ratecontrol import LossMeter, RateControl, QUALITY_KBPS  # noqa: E402
from framerate import fps_for, vbv_ms  # noqa: E402
from timing import FrameTiming  # noqa: E402
from capturerate import CaptureRate  # noqa: E402
from capturerestart import CaptureRestart, path_between  # noqa: E402
from xinput import MAX_HELD  # noqa: E402
from clipboard import Clipboard  # noqa: E402
from desktopsize import fit  # noqa: E402
from inorder import InOrder  # noqa: E402
from viewerstats import read_stats, watch_twcc  # noqa: E402

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else (os.cpu_count() or 1)
# Encoder threads = H.264 slices: Chrome's decoder has trouble with more than four.
THREADS = max(1, min(4, CPUS))
PLAYOUT_EXT_ID = 5
TWCC_EXT_ID = 3
TWCC_URI = 'http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01'
# The tab's sums of relative moves (inorder.py) stay far inside a float's exact integers.
SUM_MAX = 2 ** 49
# The H.264 level the encoder is held to (4.2: up to 1920×1080 at 60 fps): a fixed level lets the offer name the
# stream's profile-level-id before the first frame (offered_caps).
H264_LEVEL = '4.2'
OPUS_CAPS = 'application/x-rtp,media=audio,encoding-name=OPUS,payload=97,clock-rate=48000,encoding-params=(string)2'


def turn_uri(url, user, cred):
    """webrtcbin wants turn://user:pass@host:port; coturn REST usernames contain ':' so both are escaped."""
    scheme, _, rest = url.partition(':')
    rest = rest.split('?', 1)[0]
    transport = 'turns' if scheme == 'turns' else 'turn'
    return '%s://%s:%s@%s' % (transport, quote(user, safe=''), quote(cred, safe=''), rest.lstrip('/'))


def capture_branch(fps):
    """The screen's capture → I420, up to the encoder's queue. The frame rate is the capsfilter `rate`'s
    (capturerate.py changes it with the desktop's size, between two frames)."""
    return ('ximagesrc name=cap use-damage=false show-pointer=true ! capsfilter name=rate caps=video/x-raw,framerate=%d/1'
            ' ! videoconvert name=conv n-threads=%d ! video/x-raw,format=I420 ! queue max-size-buffers=1 leaky=downstream') % (fps, THREADS)


def video_branch(codec, encoder, kbps, fps):
    """Capture → I420 → encoder → payloader → webrtcbin. Keyframes only when asked for (key-int-max/gop-size
    infinite): a periodic IDR at 2 Mbit/s is a burst that Chrome's jitter estimate never forgets."""
    vbv = vbv_ms(fps)
    src = capture_branch(fps)
    if codec == 'h264' and encoder == 'nvh264enc':
        enc = ('nvh264enc name=enc preset=low-latency-hq zerolatency=true rc-mode=cbr bitrate=%d gop-size=-1 bframes=0'
               ' vbv-buffer-size=%d ! h264parse') % (kbps, max(1, kbps * vbv // 1000))
        enc += ' ! video/x-h264,profile=constrained-baseline ! rtph264pay name=pay config-interval=-1 aggregate-mode=zero-latency'
    elif codec == 'h264':
        enc = ('x264enc name=enc tune=zerolatency speed-preset=ultrafast key-int-max=2147483647 bitrate=%d vbv-buf-capacity=%d'
               ' sliced-threads=true threads=%d rc-lookahead=0 sync-lookahead=0 bframes=0 b-adapt=false mb-tree=false aud=false'
               ' insert-vui=true ! video/x-h264,profile=constrained-baseline,level=(string)%s'
               ' ! rtph264pay name=pay config-interval=-1 aggregate-mode=zero-latency') % (kbps, vbv, THREADS, H264_LEVEL)
    else:
        enc = ('vp8enc name=enc deadline=1 cpu-used=8 end-usage=cbr target-bitrate=%d keyframe-mode=disabled'
               ' buffer-size=%d buffer-initial-size=%d buffer-optimal-size=%d error-resilient=partitions threads=%d'
               ' ! rtpvp8pay name=pay') % (kbps * 1000, vbv, vbv, vbv, THREADS)
    name = 'H264' if codec == 'h264' else 'VP8'
    # nack pli / ccm fir in the offer: the browser may then ask for a keyframe when a loss leaves it unable to decode.
    return ('%s ! %s ! application/x-rtp,media=video,encoding-name=%s,payload=96,clock-rate=90000,'
            'rtcp-fb-nack-pli=true,rtcp-fb-ccm-fir=true ! webrtc.') % (src, enc, name)


def offered_caps(codec, encoder):
    """The video's RTP caps as the offer states them, set on the transceiver up front: webrtcbin then offers at once
    instead of after the first frame is captured and encoded (measured inside a desktop: 40-70 ms → 4-13 ms). They
    must match what the payloader makes, so the H.264 level is fixed (H264_LEVEL); nvh264enc (no GPU here to check
    its level against) keeps offering from its first frame."""
    fb = ('rtcp-fb-nack-pli=true,rtcp-fb-ccm-fir=true,extmap-%d=(string)"%s",extmap-%d=(string)"%s"'
          % (PLAYOUT_EXT_ID, playout.URI, TWCC_EXT_ID, TWCC_URI))
    if codec == 'vp8':
        return 'application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000,' + fb
    if encoder == 'nvh264enc':
        return None
    return ('application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000,packetization-mode=(string)1,'
            'profile-level-id=(string)42c0%02x,level-asymmetry-allowed=(string)1,%s') % (int(float(H264_LEVEL) * 10), fb)


def add_twcc(payloader):
    """Transport-wide sequence numbers on the video's packets (GStreamer's rtphdrexttwcc): the viewer then says when
    each arrived (TWCC feedback), which the rate control reads as queueing (ratecontrol.py). False where missing."""
    ext = Gst.ElementFactory.make('rtphdrexttwcc', None)
    if ext is None:
        return False
    ext.set_id(TWCC_EXT_ID)
    payloader.emit('add-extension', ext)
    return True


class Peer:
    def __init__(self, agent, conn, codec, start):
        self.agent = agent
        self.conn = conn
        self.codec = codec
        self.channel = None
        self.closed = False
        self.clips_sent = 0
        self.clipboard = Clipboard(self.send_clipboard)
        self.order = InOrder(self.apply_checked, agent.log_fn)
        self.moved = (0, 0)  # the tab's sums of relative moves, as last applied
        self.start = start
        self.started_at = time.monotonic()
        self.answered = False
        self.offering = False
        self.offer_lock = threading.Lock()
        self.negotiation_wanted = False
        self.channel_made = False
        self.remote_candidates = 0
        self.refused = 0
        self.refused_candidates = 0
        self.tcp = tcphold.TcpHold()
        self.held_full = False
        # The handlers and probes of this Peer that the pipeline holds, let go at close (let_go).
        self.handlers = []
        self.probes = []
        quality = start.get('quality', 'auto')
        self.rate = RateControl(quality if isinstance(quality, str) and quality in QUALITY_KBPS else 'auto')
        self.fps = fps_for(*(agent.screen.size() if agent.screen else (1920, 1080)), CPUS)
        desc = 'webrtcbin name=webrtc bundle-policy=max-bundle latency=0 ' + video_branch(codec, agent.h264, self.rate.kbps, self.fps)
        if agent.args.pulse_server and agent.audio_ok:
            desc += (' pulsesrc server=%s ! audioconvert ! audioresample ! queue leaky=downstream max-size-time=100000000'
                     ' ! opusenc bitrate=64000 frame-size=10 ! rtpopuspay'
                     ' ! %s ! webrtc.') % (agent.args.pulse_server, OPUS_CAPS)
        self.pipe = Gst.parse_launch(desc)
        self.webrtc = self.pipe.get_by_name('webrtc')
        if not icepace.pace_checks(self.webrtc):
            agent.log_fn('ICE checks at the default pace: no libnice agent found')
        self.enc = self.pipe.get_by_name('enc')
        pay = self.pipe.get_by_name('pay')
        self.playout = playout.add_to(pay, PLAYOUT_EXT_ID) if pay else None
        self.twcc = add_twcc(pay) if pay else False
        self.gate = agent.gate
        cap = self.pipe.get_by_name('cap')
        if self.gate and self.enc:
            self.gate.attach(cap, self.enc)  # before the timing's probes: they see only frames let through
        self.timing = FrameTiming(self.pipe, cap, self.enc)
        self.capture_rate = CaptureRate(self.pipe.get_by_name('rate'), cap)
        self.restart = CaptureRestart(cap, self.enc, path_between(cap, self.enc), agent.log_fn, self.force_keyframe,
                                      lambda: agent.end_viewer(conn)) if self.enc else None
        self.timing_at = time.monotonic()
        # Loss repair: the browser NACKs a lost packet and gets it again (RTX) within a round trip, instead of a
        # frozen picture until the next keyframe (measured by bench:stream at 0.5% loss).
        video = self.webrtc.emit('get-transceiver', 0)
        if video and video.find_property('do-nack'):
            video.set_property('do-nack', True)
            rtxcopy.copy_requests(self.pipe, Gst, GLib, agent.log_fn)  # each retransmission twice: a lost one froze the picture
        offered = offered_caps(codec, agent.h264)
        if video and offered:
            video.set_property('codec-preferences', Gst.Caps.from_string(offered))
        audio = self.webrtc.emit('get-transceiver', 1)
        if audio:
            # The sound server may take a second or two to hand over its first buffer; with the audio codec
            # stated up front, webrtcbin offers without waiting for it (the picture should not wait for sound).
            audio.set_property('codec-preferences', Gst.Caps.from_string(OPUS_CAPS))
        self.keyframe_requests = 0
        self.reports_seen = 0
        self.loss = LossMeter()
        self.twcc_watched = False
        self.twcc_said = False
        if self.enc:
            # The viewer's PLI/FIR comes up from webrtcbin's RTP session as a force-key-unit event; the encoder
            # answers it with a keyframe, so a lost packet never leaves a frozen picture. Counted for the log.
            pad = self.enc.get_static_pad('src')
            self.probes.append((pad, pad.add_probe(Gst.PadProbeType.EVENT_UPSTREAM, self.on_upstream)))
        for s in agent.ice_servers:
            urls = s.get('urls', [])
            for url in urls if isinstance(urls, list) else [urls]:
                if not isinstance(url, str) or not guard.server_host_ok(url, agent.own):
                    agent.log_fn('ICE server refused (names this machine or is not a URL)')
                    continue
                if url.startswith('stun:'):
                    self.webrtc.set_property('stun-server', 'stun://' + url[5:].split('?', 1)[0])
                elif url.startswith(('turn:', 'turns:')) and s.get('username'):
                    self.webrtc.emit('add-turn-server', turn_uri(url, str(s['username']), str(s.get('credential', ''))))
        self.on(self.webrtc, 'on-negotiation-needed', self.on_negotiation)
        self.on(self.webrtc, 'on-ice-candidate', self.on_ice)
        self.on(self.webrtc, 'notify::ice-connection-state', self.on_state)
        self.on(self.webrtc, 'notify::connection-state', self.on_connection)
        bus = self.pipe.get_bus()
        bus.add_signal_watch()
        self.on(bus, 'message::error', self.on_error)
        self.pipe.set_state(Gst.State.READY)
        # Unordered (inorder.py): a lost packet holds back only itself; the messages' own numbers give the order.
        unordered = Gst.Structure.new_from_string('options, ordered=(boolean)false')
        self.channel = self.webrtc.emit('create-data-channel', 'input', unordered)
        if self.channel:
            self.on(self.channel, 'on-message-string', self.on_input)
            self.on(self.channel, 'on-open', self.on_channel_open)
        self.channel_made = True
        if self.negotiation_wanted:
            self.offer_once()
        self.pipe.set_state(Gst.State.PLAYING)
        self.stats_timer = GLib.timeout_add(1000, self.poll_stats)
        self.timing_timer = GLib.timeout_add(2000, self.send_timing)
        # The desktop's clipboard goes to the tab once the channel opens, then at each copy there (clipwatch.py);
        # without XFixes, it is looked at every 0.7 s.
        if not agent.clip_watch:
            GLib.timeout_add(700, self.clipboard.read)
        agent.log_fn('viewer started, codec %s, %d kbit/s, %d fps, VBV %d ms, %d slices, playout delay %s, TWCC %s'
                     % (codec, self.rate.kbps, self.fps, vbv_ms(self.fps), THREADS, '0/0' if self.playout else 'unavailable',
                        'offered' if self.twcc else 'unavailable'))

    def on_upstream(self, _pad, info):
        ev = info.get_event()
        st = ev.get_structure() if ev else None
        if st and st.get_name() == 'GstForceKeyUnit':
            self.opened()
            self.keyframe_requests += 1
            if self.keyframe_requests <= 3 or self.keyframe_requests % 20 == 0:
                self.agent.log_fn('keyframe requested (%d so far: the viewer\'s PLI/FIR, and one when the media path connects)' % self.keyframe_requests)
        return Gst.PadProbeReturn.OK

    # --- signaling -------------------------------------------------------------------------------------------
    def on_negotiation(self, _el):
        self.negotiation_wanted = True
        if self.channel_made:
            self.offer_once()

    def offer_once(self):
        """One offer per viewer, with the input channel in it: with the video's caps stated up front webrtcbin asks
        for negotiation as it goes to READY, before the channel exists, and again once it does."""
        with self.offer_lock:  # webrtcbin asks from its own thread, the channel is made on the main loop
            if self.offering:
                return
            self.offering = True
        promise = Gst.Promise.new_with_change_func(self.on_offer, None)
        self.webrtc.emit('create-offer', None, promise)

    def on_offer(self, promise, _data):
        promise.wait()
        if self.closed:
            return  # replaced by a newer viewer meanwhile: its offer goes instead
        reply = promise.get_reply()
        offer = reply.get_value('offer')
        self.webrtc.emit('set-local-description', offer, Gst.Promise.new())
        self.agent.send(self.conn, {'type': 'offer', 'sdp': with_rtx_time(offer.sdp.as_text())})
        self.agent.log_fn('offer sent %.0f ms after the viewer started' % ((time.monotonic() - self.started_at) * 1000))

    def on_ice(self, _el, mline, candidate):
        if self.tcp.offer(mline, candidate):
            self.send_candidate(mline, candidate)

    def send_candidate(self, mline, candidate):
        self.agent.send(self.conn, {'type': 'ice', 'candidate': candidate, 'sdpMLineIndex': mline})

    def release_tcp(self):
        """The ICE-TCP candidates' hold is over (tcphold.py): sent only if UDP has not connected."""
        if self.closed:
            return False
        state = self.webrtc.get_property('ice-connection-state')
        connected = state in (GstWebRTC.WebRTCICEConnectionState.CONNECTED, GstWebRTC.WebRTCICEConnectionState.COMPLETED)
        held = self.tcp.release(connected)
        for mline, candidate in held:
            self.send_candidate(mline, candidate)
        self.agent.log_fn('ICE-TCP candidates held back: connected over UDP' if connected else
                          'ICE-TCP candidates sent (%d): UDP not connected %.1f s after the answer' % (len(held), tcphold.HOLD_S))
        return False

    def on_state(self, el, _pspec):
        self.agent.log_fn('ice state', el.get_property('ice-connection-state').value_nick)

    def on_connection(self, el, _pspec):
        """DTLS is up (webrtcbin sent no media before: the encoder's first IDR went nowhere): a keyframe now, so
        the viewer's first frame does not wait for its own PLI."""
        state = el.get_property('connection-state')
        self.agent.log_fn('connection %s %.0f ms after the viewer started' % (state.value_nick, (time.monotonic() - self.started_at) * 1000))
        if state == GstWebRTC.WebRTCPeerConnectionState.CONNECTED:
            GLib.idle_add(self.force_keyframe)

    def opened(self):
        """Frames go on for a moment (framegate.py): input, a keyframe to make or a new size."""
        if self.gate:
            self.gate.input()

    def force_keyframe(self):
        if not self.closed and self.enc:
            self.opened()
            self.enc.send_event(GstVideo.video_event_new_upstream_force_key_unit(Gst.CLOCK_TIME_NONE, True, 0))
        return False

    def answer(self, sdp):
        if self.answered:
            return  # one answer per offer: a second one would renegotiate
        self.answered = True
        res, msg = GstSdp.SDPMessage.new_from_text(sdp)
        if res != GstSdp.SDPResult.OK:
            return
        desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, msg)
        self.webrtc.emit('set-remote-description', desc, Gst.Promise.new())
        GLib.timeout_add(int(tcphold.HOLD_S * 1000), self.release_tcp)

    def add_ice(self, candidate, mline):
        """A remote candidate from the viewer, unless it names this machine (loopback, link-local, its own
        addresses) or the viewer already sent MAX_REMOTE_CANDIDATES."""
        try:
            mline = guard.number(mline, 0, 7)
        except ValueError:
            return
        if self.remote_candidates >= guard.MAX_REMOTE_CANDIDATES or not guard.candidate_ok(candidate, self.agent.own):
            self.refused_candidates += 1
            if self.refused_candidates <= 3:
                self.agent.log_fn('remote ICE candidate refused')
            return
        self.remote_candidates += 1
        self.webrtc.emit('add-ice-candidate', mline, candidate)

    def on_error(self, _bus, msg):
        err, dbg = msg.parse_error()
        self.agent.log_fn('pipeline error:', err.message, dbg)
        if self.restart and self.restart.owns(msg.src):
            self.restart.failed()

    # --- input -----------------------------------------------------------------------------------------------
    def on_channel_open(self, _ch):
        self.agent.log_fn('input channel open')
        self.clipboard.read()

    def send_clipboard(self, text):
        """The desktop's clipboard, numbered: the channel is unordered, and the tab keeps only the newest."""
        sent = self.send_channel({'t': 'clip', 'text': text, 'n': self.clips_sent})
        self.clips_sent += 1
        return sent

    def send_channel(self, obj):
        """Sends to the tab over the data channel; False when it is not open."""
        ch = self.channel
        if ch and ch.get_property('ready-state') == GstWebRTC.WebRTCDataChannelState.OPEN:
            ch.emit('send-string', json.dumps(obj))
            return True
        return False

    def on_input(self, _ch, text):
        """One input message from the viewer. Anything malformed, too big or out of range is dropped (a viewer may
        be hostile: it has a shell in this desktop anyway, but must not be able to end the stream for itself)."""
        if not isinstance(text, str) or len(text) > guard.MAX_INPUT_MESSAGE:
            return self.dropped('message too big')
        try:
            m = json.loads(text)
        except (ValueError, RecursionError):
            return self.dropped('not JSON')
        if not isinstance(m, dict):
            return None
        self.opened()
        try:
            self.order.take(m)
        except ValueError as e:
            self.dropped('its number: %s' % str(e)[:80])
        return None

    def apply_checked(self, m):
        """Applies one message in its turn (inorder.py); a bad one is dropped and counted."""
        try:
            self.apply_input(m)
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            self.dropped('%s: %s' % (type(e).__name__, str(e)[:80]))
        except Exception as e:  # noqa: BLE001 (an input message must never end the agent's main loop)
            self.dropped('unexpected %s: %s' % (type(e).__name__, str(e)[:80]))

    def dropped(self, why):
        self.refused += 1
        if self.refused <= 5 or self.refused % 1000 == 0:
            self.agent.log_fn('input message dropped (%s; %d so far)' % (why, self.refused))

    def apply_input(self, m):
        x = self.agent.input
        n = guard.number
        t = m.get('t')
        if t == 'm':
            x.move(n(m['x'], 0, 32767), n(m['y'], 0, 32767))
        elif t == 'r':
            # How far the pointer has moved in all since the channel opened (inorder.py): the difference is this move.
            sx, sy = n(m['x'], -SUM_MAX, SUM_MAX), n(m['y'], -SUM_MAX, SUM_MAX)
            dx, dy = sx - self.moved[0], sy - self.moved[1]
            self.moved = (sx, sy)
            x.move_by(max(-32767, min(32767, dx)), max(-32767, min(32767, dy)))
        elif t == 'b':
            x.button(n(m['b'], 1, 9), bool(m['d']))
        elif t == 'w':
            x.wheel(n(m.get('dy', 0), -100, 100), n(m.get('dx', 0), -100, 100))
        elif t == 'k':
            x.key(n(m['s'], 1, 0x1FFFFFFF), bool(m['d']))
            if len(x.keys) >= MAX_HELD and not self.held_full:
                self.held_full = True
                self.agent.log_fn('held keys at the limit (%d): more key-downs are ignored until a key-up' % MAX_HELD)
        elif t == 'reset':
            x.release_all()
        elif t == 'clip' and isinstance(m.get('text'), str):
            self.clipboard.set(m['text'][:1024 * 1024])
        elif t == 'size':
            GLib.idle_add(self.resize, n(m['w'], 1, 16384), n(m['h'], 1, 16384))
        elif t == 'quality' and isinstance(m.get('q'), str) and m['q'] in QUALITY_KBPS:
            self.rate.set_quality(m['q'])
            GLib.idle_add(self.apply_bitrate)

    def resize(self, w, h):
        """The tab's video area changed: the desktop takes its shape (within the maximum); ximagesrc and the encoder
        follow the new root size by themselves, and the browser's decoder picks it up at the next keyframe."""
        screen = self.agent.screen
        if self.closed or not screen:
            return False
        size = fit(w, h, *screen.max)
        # The capture's frame rate first (taken before the capture's next frame), then the size: ximagesrc mostly
        # takes both in one negotiation.
        self.follow_size(*size)
        if screen.resize(*size):
            moved = screen.windows_moved
            self.agent.log_fn('desktop resized to %dx%d' % size + (', %d window(s) brought back on-screen' % moved if moved else ''))
        self.follow_size(*screen.size())  # the size the screen took: the old one where the resize failed
        return False

    def follow_size(self, w, h):
        """The frame rate the desktop's cores afford at its new size (framerate.py): the rate control's buffer first,
        then the capture's caps; the encoder starts again on the new caps (as it does for the new size) with an IDR."""
        self.opened()
        fps = fps_for(w, h, CPUS)
        if fps == self.fps or not self.enc:
            return
        self.fps = fps
        vbv = vbv_ms(fps)
        if self.enc.find_property('vbv-buf-capacity'):
            self.enc.set_property('vbv-buf-capacity', vbv)
        elif self.enc.find_property('buffer-size'):
            for prop in ('buffer-size', 'buffer-initial-size', 'buffer-optimal-size'):
                self.enc.set_property(prop, vbv)
        elif self.enc.find_property('vbv-buffer-size'):
            self.enc.set_property('vbv-buffer-size', max(1, self.rate.kbps * vbv // 1000))
        self.capture_rate.set(fps)
        self.agent.log_fn('capture at %d fps for %dx%d on %d cores (VBV %d ms)' % (fps, w, h, CPUS, vbv))

    # --- stage timing ---------------------------------------------------------------------------------------
    def send_timing(self):
        if self.closed:
            return False
        now = time.monotonic()
        summary = self.timing.summary(max(0.001, now - self.timing_at))
        self.timing_at = now
        summary['targetFps'] = self.fps
        summary['kbps'] = self.rate.kbps
        self.send_channel(summary)
        return True

    # --- rate control ----------------------------------------------------------------------------------------
    def poll_stats(self):
        if self.closed:
            return False
        if self.twcc and not self.twcc_watched:
            self.twcc_watched = watch_twcc(self.webrtc, self.rate.twcc)
        promise = Gst.Promise.new_with_change_func(self.on_stats, None)
        self.webrtc.emit('get-stats', None, promise)
        return True

    def on_stats(self, promise, _data):
        promise.wait()
        reply = promise.get_reply()
        if not reply:
            return
        found = read_stats(reply)
        if 'lost' not in found:
            return
        if not self.reports_seen:
            self.agent.log_fn('first receiver report: %d lost of %d sent, rtt %.0f ms'
                              % (found['lost'], found.get('sent', 0), found.get('rtt', 0.0) * 1000))
        self.reports_seen += 1
        loss = self.loss.add(found.get('sent', 0), found['lost'])
        if self.rate.twcc.seen and not self.twcc_said:
            self.twcc_said = True
            self.agent.log_fn('TWCC feedback from the viewer: queueing read from it')
        if self.rate.update(loss, found.get('rtt', 0.0)):
            GLib.idle_add(self.apply_bitrate)

    def apply_bitrate(self):
        if self.closed or not self.enc:
            return False
        kbps = self.rate.kbps
        self.agent.log_fn('video bitrate %d kbit/s (cap %d): %s' % (kbps, self.rate.cap, self.rate.reason))
        if self.enc.find_property('target-bitrate'):
            self.enc.set_property('target-bitrate', kbps * 1000)
        else:
            self.enc.set_property('bitrate', kbps)
        return False

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.restart:
            self.restart.close()
        if self.gate:
            self.gate.detach()
            self.agent.log_fn(self.gate.summary())
        self.clipboard.close()
        self.pipe.set_state(Gst.State.NULL)
        self.pipe.get_bus().remove_signal_watch()
        self.let_go()

    def on(self, obj, signal, handler):
        self.handlers.append((obj, obj.connect(signal, handler)))

    def let_go(self):
        """Unties the pipeline from this Peer. Its handlers and probes are held from C, where Python's collector does
        not look, and they hold the Peer, which holds the pipeline: every ended viewer's pipeline lived on, with
        webrtcbin's two threads (a tab reloaded about 240 times filled the desktop's process limit)."""
        for obj, handler in self.handlers:
            obj.disconnect(handler)
        for pad, probe in self.probes:
            pad.remove_probe(probe)
        self.handlers, self.probes = [], []
        self.timing.close()
        for timer in (self.stats_timer, self.timing_timer):
            GLib.source_remove(timer)
