"""One viewer: the GStreamer pipeline into webrtcbin, its data channel 'input', rate control and clipboard."""
import json
import subprocess
import threading
import time
from urllib.parse import quote

from gi.repository import GLib, Gst, GstSdp, GstWebRTC

from ratecontrol import Aimd, QUALITY_KBPS
from xscreen import fit

FPS = 30
OPUS_CAPS = 'application/x-rtp,media=audio,encoding-name=OPUS,payload=97,clock-rate=48000,encoding-params=(string)2'


def turn_uri(url, user, cred):
    """webrtcbin wants turn://user:pass@host:port; coturn REST usernames contain ':' so both are escaped."""
    scheme, _, rest = url.partition(':')
    rest = rest.split('?', 1)[0]
    transport = 'turns' if scheme == 'turns' else 'turn'
    return '%s://%s:%s@%s' % (transport, quote(user, safe=''), quote(cred, safe=''), rest.lstrip('/'))


def video_branch(codec, encoder, kbps):
    src = 'ximagesrc use-damage=false show-pointer=true ! video/x-raw,framerate=%d/1 ! videoconvert ! queue max-size-buffers=1 leaky=downstream' % FPS
    if codec == 'h264' and encoder == 'nvh264enc':
        enc = 'nvh264enc name=enc preset=low-latency-hq zerolatency=true rc-mode=cbr bitrate=%d gop-size=%d ! h264parse' % (kbps, FPS * 2)
        enc += ' ! video/x-h264,profile=constrained-baseline ! rtph264pay config-interval=-1 aggregate-mode=zero-latency'
    elif codec == 'h264':
        enc = ('x264enc name=enc tune=zerolatency speed-preset=ultrafast key-int-max=%d bitrate=%d vbv-buf-capacity=300 threads=2'
               ' ! video/x-h264,profile=constrained-baseline ! rtph264pay config-interval=-1 aggregate-mode=zero-latency') % (FPS * 2, kbps)
    else:
        enc = ('vp8enc name=enc deadline=1 cpu-used=8 end-usage=cbr target-bitrate=%d keyframe-max-dist=%d error-resilient=partitions'
               ' threads=2 ! rtpvp8pay') % (kbps * 1000, FPS * 2)
    name = 'H264' if codec == 'h264' else 'VP8'
    # nack pli / ccm fir in the offer: the browser may then ask for a keyframe when a loss leaves it unable to decode.
    return ('%s ! %s ! application/x-rtp,media=video,encoding-name=%s,payload=96,clock-rate=90000,'
            'rtcp-fb-nack-pli=true,rtcp-fb-ccm-fir=true ! webrtc.') % (src, enc, name)


class Peer:
    def __init__(self, agent, conn, codec, start):
        self.agent = agent
        self.conn = conn
        self.codec = codec
        self.channel = None
        self.closed = False
        self.clip = None
        self.start = start
        quality = start.get('quality', 'auto')
        self.rate = Aimd(quality if quality in QUALITY_KBPS else 'auto')
        desc = 'webrtcbin name=webrtc bundle-policy=max-bundle latency=0 ' + video_branch(codec, agent.h264, self.rate.kbps)
        if agent.args.pulse_server and agent.audio_ok:
            desc += (' pulsesrc server=%s ! audioconvert ! audioresample ! queue leaky=downstream max-size-time=100000000'
                     ' ! opusenc bitrate=64000 frame-size=10 ! rtpopuspay'
                     ' ! %s ! webrtc.') % (agent.args.pulse_server, OPUS_CAPS)
        self.pipe = Gst.parse_launch(desc)
        self.webrtc = self.pipe.get_by_name('webrtc')
        self.enc = self.pipe.get_by_name('enc')
        # Loss repair: the browser NACKs a lost packet and gets it again (RTX) within a round trip, instead of a
        # frozen picture until the next keyframe (measured by bench:stream at 0.5% loss).
        video = self.webrtc.emit('get-transceiver', 0)
        if video and video.find_property('do-nack'):
            video.set_property('do-nack', True)
        audio = self.webrtc.emit('get-transceiver', 1)
        if audio:
            # The sound server may take a second or two to hand over its first buffer; with the audio codec
            # stated up front, webrtcbin offers without waiting for it (the picture should not wait for sound).
            audio.set_property('codec-preferences', Gst.Caps.from_string(OPUS_CAPS))
        self.keyframe_requests = 0
        self.reports_seen = 0
        if self.enc:
            # The viewer's PLI/FIR comes up from webrtcbin's RTP session as a force-key-unit event; the encoder
            # answers it with a keyframe, so a lost packet never leaves a frozen picture. Counted for the log.
            self.enc.get_static_pad('src').add_probe(Gst.PadProbeType.EVENT_UPSTREAM, self.on_upstream)
        for s in agent.ice_servers:
            urls = s.get('urls', [])
            for url in urls if isinstance(urls, list) else [urls]:
                if not isinstance(url, str):
                    continue
                if url.startswith('stun:'):
                    self.webrtc.set_property('stun-server', 'stun://' + url[5:].split('?', 1)[0])
                elif url.startswith(('turn:', 'turns:')) and s.get('username'):
                    self.webrtc.emit('add-turn-server', turn_uri(url, str(s['username']), str(s.get('credential', ''))))
        self.webrtc.connect('on-negotiation-needed', self.on_negotiation)
        self.webrtc.connect('on-ice-candidate', self.on_ice)
        self.webrtc.connect('notify::ice-connection-state', self.on_state)
        bus = self.pipe.get_bus()
        bus.add_signal_watch()
        bus.connect('message::error', self.on_error)
        self.pipe.set_state(Gst.State.READY)
        self.channel = self.webrtc.emit('create-data-channel', 'input', None)
        if self.channel:
            self.channel.connect('on-message-string', self.on_input)
            self.channel.connect('on-open', lambda _ch: agent.log_fn('input channel open'))
        self.pipe.set_state(Gst.State.PLAYING)
        self.stats_timer = GLib.timeout_add(1000, self.poll_stats)
        self.clip_timer = GLib.timeout_add(700, self.poll_clipboard)
        agent.log_fn('viewer started, codec %s, %d kbit/s' % (codec, self.rate.kbps))

    def on_upstream(self, _pad, info):
        ev = info.get_event()
        st = ev.get_structure() if ev else None
        if st and st.get_name() == 'GstForceKeyUnit':
            self.keyframe_requests += 1
            if self.keyframe_requests <= 3 or self.keyframe_requests % 20 == 0:
                self.agent.log_fn('keyframe requested by the viewer (%d so far)' % self.keyframe_requests)
        return Gst.PadProbeReturn.OK

    # --- signaling -------------------------------------------------------------------------------------------
    def on_negotiation(self, _el):
        promise = Gst.Promise.new_with_change_func(self.on_offer, None)
        self.webrtc.emit('create-offer', None, promise)

    def on_offer(self, promise, _data):
        promise.wait()
        reply = promise.get_reply()
        offer = reply.get_value('offer')
        self.webrtc.emit('set-local-description', offer, Gst.Promise.new())
        self.agent.send(self.conn, {'type': 'offer', 'sdp': offer.sdp.as_text()})

    def on_ice(self, _el, mline, candidate):
        self.agent.send(self.conn, {'type': 'ice', 'candidate': candidate, 'sdpMLineIndex': mline})

    def on_state(self, el, _pspec):
        self.agent.log_fn('ice state', el.get_property('ice-connection-state').value_nick)

    def answer(self, sdp):
        res, msg = GstSdp.SDPMessage.new_from_text(sdp)
        if res != GstSdp.SDPResult.OK:
            return
        desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, msg)
        self.webrtc.emit('set-remote-description', desc, Gst.Promise.new())

    def add_ice(self, candidate, mline):
        if isinstance(candidate, str) and candidate and isinstance(mline, int):
            self.webrtc.emit('add-ice-candidate', mline, candidate)

    def on_error(self, _bus, msg):
        err, dbg = msg.parse_error()
        self.agent.log_fn('pipeline error:', err.message, dbg)

    # --- input -----------------------------------------------------------------------------------------------
    def send_channel(self, obj):
        ch = self.channel
        if ch and ch.get_property('ready-state') == GstWebRTC.WebRTCDataChannelState.OPEN:
            ch.emit('send-string', json.dumps(obj))

    def on_input(self, _ch, text):
        try:
            m = json.loads(text)
        except ValueError:
            return
        if not isinstance(m, dict):
            return
        x = self.agent.input
        t = m.get('t')
        try:
            if t == 'm':
                x.move(m['x'], m['y'])
            elif t == 'r':
                x.move_by(m['dx'], m['dy'])
            elif t == 'b':
                x.button(m['b'], bool(m['d']))
            elif t == 'w':
                x.wheel(m.get('dy', 0), m.get('dx', 0))
            elif t == 'k':
                x.key(m['s'], bool(m['d']))
            elif t == 'reset':
                x.release_all()
            elif t == 'clip' and isinstance(m.get('text'), str):
                self.set_clipboard(m['text'][:1024 * 1024])
            elif t == 'size':
                GLib.idle_add(self.resize, int(m['w']), int(m['h']))
            elif t == 'quality' and m.get('q') in QUALITY_KBPS:
                self.rate.set_quality(m['q'])
                GLib.idle_add(self.apply_bitrate)
        except (KeyError, TypeError, ValueError):
            pass

    def resize(self, w, h):
        """The tab's video area changed: the desktop takes its shape (within the maximum); ximagesrc and the encoder
        follow the new root size by themselves, and the browser's decoder picks it up at the next keyframe."""
        screen = self.agent.screen
        if self.closed or not screen:
            return False
        size = fit(w, h, *screen.max)
        if screen.resize(*size):
            self.agent.log_fn('desktop resized to %dx%d' % size)
        return False

    # --- clipboard -------------------------------------------------------------------------------------------
    def set_clipboard(self, text):
        self.clip = text
        try:
            # xclip forks and keeps owning the selection after we have written it.
            # Both selections: Ctrl+V pastes the clipboard, Shift+Insert (xterm, VNC viewers) the primary selection.
            for sel in ('primary', 'clipboard'):
                subprocess.run(['xclip', '-selection', sel, '-i'], input=text.encode(), timeout=3,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # The tab sends a paste key right after the text: hold the input queue until the desktop's clipboard has it.
            for _ in range(20):
                out = subprocess.run(['xclip', '-selection', 'clipboard', '-o'], capture_output=True, timeout=1)
                if out.returncode == 0 and out.stdout.decode('utf-8', 'replace') == text:
                    break
                time.sleep(0.025)
        except (OSError, subprocess.SubprocessError):
            pass

    def poll_clipboard(self):
        if self.closed:
            return False
        threading.Thread(target=self._read_clipboard, daemon=True).start()
        return True

    def _read_clipboard(self):
        try:
            out = subprocess.run(['xclip', '-selection', 'clipboard', '-o'], capture_output=True, timeout=2)
        except (OSError, subprocess.SubprocessError):
            return
        if out.returncode != 0:
            return
        text = out.stdout.decode('utf-8', 'replace')[:1024 * 1024]
        if text != self.clip:
            self.clip = text
            self.send_channel({'t': 'clip', 'text': text})

    # --- rate control ----------------------------------------------------------------------------------------
    def poll_stats(self):
        if self.closed:
            return False
        promise = Gst.Promise.new_with_change_func(self.on_stats, None)
        self.webrtc.emit('get-stats', None, promise)
        return True

    def on_stats(self, promise, _data):
        promise.wait()
        reply = promise.get_reply()
        if not reply:
            return
        found = {}

        def each(_field, value, _u):
            # Each stat is a structure named by its id (rtp-remote-inbound-stream-stats_<ssrc>); its kind is the
            # 'type' field. (Matching the name against 'remote-inbound-rtp' never matched: rate control never ran.)
            if isinstance(value, Gst.Structure) and value.get_value('type') == GstWebRTC.WebRTCStatsType.REMOTE_INBOUND_RTP:
                ok, lost = value.get_double('fraction-lost')
                ok2, rtt = value.get_double('round-trip-time')
                # Video and audio each have a report: the worse one rules.
                if ok:
                    found['lost'] = max(lost, found.get('lost', 0.0))
                if ok2:
                    found['rtt'] = max(rtt, found.get('rtt', 0.0))
            return True

        reply.foreach(each, None)
        if 'lost' not in found:
            return
        if not self.reports_seen:
            self.agent.log_fn('first receiver report: loss %.3f, rtt %.0f ms' % (found['lost'], found.get('rtt', 0.0) * 1000))
        self.reports_seen += 1
        if self.rate.update(found['lost'], found.get('rtt', 0.0)):
            GLib.idle_add(self.apply_bitrate)

    def apply_bitrate(self):
        if self.closed or not self.enc:
            return False
        kbps = self.rate.kbps
        self.agent.log_fn('video bitrate %d kbit/s (cap %d)' % (kbps, self.rate.cap))
        if self.enc.find_property('target-bitrate'):
            self.enc.set_property('target-bitrate', kbps * 1000)
        else:
            self.enc.set_property('bitrate', kbps)
        return False

    def close(self):
        self.closed = True
        self.pipe.set_state(Gst.State.NULL)
        self.pipe.get_bus().remove_signal_watch()
