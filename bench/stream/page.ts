/**
 * What bench:stream runs inside the connect tab, as plain JavaScript source (tsx would wrap named helpers of
 * functions passed to evaluate in a __name call the page does not have). Nothing here changes the product: an init
 * script only observes (the tab's RTCPeerConnection, the bytes its WebSockets receive, noVNC's flips of its back
 * buffer onto the visible canvas, key presses).
 */

/** Installed in every document of the bench's browser contexts before the app's own scripts. */
export const OBSERVE = String.raw`(() => {
  const w = window;
  const hd = (w.__hd = { pcs: [], wsBytes: 0, flips: [], keys: [], timing: [] });
  const PC = w.RTCPeerConnection;
  // Milestones of the tab's connection (performance.now()): gateway socket opened, agent's offer taken, answer, media path up.
  hd.at = {};
  const mark = (k) => { if (hd.at[k] === undefined) hd.at[k] = performance.now(); };
  if (PC) w.RTCPeerConnection = class extends PC {
    constructor(...a) {
      super(...a);
      hd.pcs.push(this);
      this.addEventListener('connectionstatechange', () => { if (this.connectionState === 'connected') mark('connected'); });
      // ICE's own connected (a pair answered): from there to 'connected' is the DTLS handshake.
      this.addEventListener('iceconnectionstatechange', () => { if (this.iceConnectionState === 'connected') mark('ice'); });
      this.addEventListener('track', (e) => { if (e.track.kind === 'video') mark('track'); });
      // The agent's stage timing ({"t":"timing",...} every 2 s on the input channel; the app ignores it).
      this.addEventListener('datachannel', (e) => e.channel.addEventListener('message', (m) => {
        try {
          const d = JSON.parse(String(m.data));
          if (d && d.t === 'timing') hd.timing.push({ ...d, at: performance.now() });
        } catch {}
      }));
    }
    setRemoteDescription(...a) { mark('offer'); return super.setRemoteDescription(...a); }
    setLocalDescription(...a) { mark('answer'); return super.setLocalDescription(...a); }
  };
  // The ticket hand-over from the dashboard (api/ticketHandoff): the tab's ask and the dashboard's answer.
  const BC = w.BroadcastChannel;
  if (BC) {
    const post = BC.prototype.postMessage;
    BC.prototype.postMessage = function (m) { if (m && m.type === 'want') mark('ask'); return post.call(this, m); };
    w.BroadcastChannel = class extends BC {
      constructor(...a) { super(...a); this.addEventListener('message', (e) => { if (e.data && e.data.type === 'ticket') mark('handed'); }); }
    };
  }
  // A plain function returning the real socket (noVNC rejects a subclass instance as its channel).
  const WS = w.WebSocket;
  const count = (e) => {
    const d = e.data;
    hd.wsBytes += typeof d === 'string' ? d.length : d.byteLength || d.size || 0;
  };
  const Wrapped = function (...a) {
    const ws = new WS(...a);
    mark('socket');
    if (!hd.socketUrl) hd.socketUrl = String(a[0]);
    ws.addEventListener('open', () => mark('open'));
    ws.addEventListener('message', count);
    // The gateway's side: its ICE servers once it has reached the agent, then the agent's offer as it arrives.
    ws.addEventListener('message', (e) => {
      if (typeof e.data !== 'string') return;
      if (e.data.startsWith('{"type":"rtc-config"')) mark('agent reached');
      else if (e.data.startsWith('{"type":"offer"')) mark('offer came');
    });
    return ws;
  };
  Wrapped.prototype = WS.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Wrapped[k] = WS[k];
  w.WebSocket = Wrapped;
  // The first video frame the page is called back for (the app asks, webrtc.ts): when its last packet came and when
  // the callback ran, both on the page's clock.
  const rvfc = HTMLVideoElement.prototype.requestVideoFrameCallback;
  if (rvfc) HTMLVideoElement.prototype.requestVideoFrameCallback = function (cb) {
    return rvfc.call(this, (now, meta) => {
      if (meta && meta.receiveTime !== undefined && hd.at['frame received'] === undefined) hd.at['frame received'] = meta.receiveTime;
      mark('frame callback');
      return cb(now, meta);
    });
  };
  // noVNC paints into a back buffer and, once per framebuffer update, draws it onto the visible canvas: a "flip".
  const draw = CanvasRenderingContext2D.prototype.drawImage;
  CanvasRenderingContext2D.prototype.drawImage = function (img, ...rest) {
    if (img instanceof HTMLCanvasElement && this.canvas.isConnected && this.canvas.closest('[data-testid="desktop"]')) hd.flips.push(performance.now());
    return draw.call(this, img, ...rest);
  };
  // t: the key's own time (the input event's timestamp, taken when the browser got it); h: when the tab ran it.
  w.addEventListener('keydown', (e) => hd.keys.push({ key: e.key, t: e.timeStamp, h: performance.now() }), true);
})();`;

/** The element the desktop is drawn on: the WebRTC <video> or noVNC's canvas (or Selkies-GStreamer's <video>). */
const SURFACE = String.raw`(document.querySelector('[data-testid="desktop-video"]') || document.querySelector('[data-testid="desktop"] canvas') || document.querySelector('video#stream'))`;

/**
 * Expression: distinct colours (quantised to 3 bits a channel, so video noise does not count) in the desktop's
 * current frame scaled down to 128×72; 0 before the first frame (a blank desktop has 1).
 */
export const COLOURS = String.raw`(() => {
  const s = ${SURFACE};
  if (!s) return 0;
  const w = s.videoWidth ?? s.width, h = s.videoHeight ?? s.height;
  if (!w || !h || (s.readyState !== undefined && s.readyState < 2)) return 0;
  const c = document.createElement('canvas');
  c.width = 128; c.height = 72;
  const g = c.getContext('2d', { willReadFrequently: true });
  g.drawImage(s, 0, 0, w, h, 0, 0, 128, 72);
  const d = g.getImageData(0, 0, 128, 72).data;
  const seen = new Set();
  let opaque = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] !== 255) continue;
    opaque++;
    seen.add(((d[i] >> 5) << 6) | ((d[i + 1] >> 5) << 3) | (d[i + 2] >> 5));
  }
  return opaque ? seen.size : 0;
})()`;

/** Expression: the newest open connection that receives video (Selkies-GStreamer has another one for its sound). */
const VIDEO_PC = String.raw`window.__hd.pcs.filter((p) => p.connectionState !== 'closed' && p.getReceivers().some((r) => r.track && r.track.kind === 'video')).pop()`;

/**
 * Expression: the NACKs the tab has sent for the video so far (each asks for a packet again: one lost on the way, or
 * late) and the retransmissions (RTX) it received, or null without a WebRTC video (VNC, a streamer of another kind).
 */
export const LOSS_REPAIRS = String.raw`(async () => {
  const pc = ${VIDEO_PC};
  if (!pc) return null;
  let n = null;
  (await pc.getStats()).forEach((s) => {
    if (s.type === 'inbound-rtp' && s.kind === 'video') n = { nacks: s.nackCount || 0, rtx: s.retransmittedPacketsReceived || 0 };
  });
  return n;
})()`;

/** Expression: a snapshot of the counters the bench turns into rates (both transports). */
export const SNAPSHOT = String.raw`(async () => {
  const hd = window.__hd;
  const out = { t: performance.now(), flips: hd.flips.length, wsBytes: hd.wsBytes, rtc: null };
  const pc = ${VIDEO_PC};
  if (pc) {
    const r = await pc.getStats();
    let v = null, pair = null, local = null, selected = null;
    const byId = new Map();
    r.forEach((s) => {
      byId.set(s.id, s);
      if (s.type === 'inbound-rtp' && s.kind === 'video') v = s;
      if (s.type === 'transport' && s.selectedCandidatePairId) selected = s.selectedCandidatePairId;
      if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') pair = s;
    });
    // The transport's selected pair; a nominated one is not always marked succeeded (a run on a loaded VM had none).
    if (selected && byId.get(selected)) pair = byId.get(selected);
    if (pair) local = byId.get(pair.localCandidateId);
    const remote = pair ? byId.get(pair.remoteCandidateId) : null;
    if (v) out.rtc = {
      framesDecoded: v.framesDecoded || 0, bytes: (v.bytesReceived || 0) + (v.headerBytesReceived || 0),
      freezeCount: v.freezeCount || 0, freezeS: v.totalFreezesDuration || 0, packetsLost: v.packetsLost || 0,
      packetsReceived: v.packetsReceived || 0, keyFrames: v.keyFramesDecoded || 0, pli: v.pliCount || 0, nack: v.nackCount || 0,
      rtx: v.retransmittedPacketsReceived || 0,
      jitterBufferS: v.jitterBufferDelay || 0, jitterBufferFrames: v.jitterBufferEmittedCount || 0, decodeS: v.totalDecodeTime || 0,
      width: v.frameWidth || 0, height: v.frameHeight || 0, decoder: v.decoderImplementation || '',
      codec: (byId.get(v.codecId) || {}).mimeType || '',
      rttS: pair ? pair.currentRoundTripTime : null,
      feedback: [...new Set(((pc.remoteDescription && pc.remoteDescription.sdp) || '').match(/a=rtcp-fb:\d+ [^\r\n]*/g) || [])].map((l) => l.replace(/a=rtcp-fb:\d+ /, '')).join(', ') || 'none',
      path: local ? local.protocol + ' ' + local.address + ' → ' + (remote ? remote.address + ':' + remote.port : '?') : '',
    };
  }
  return out;
})()`;

/** Expression: noVNC's flip times since `from` (performance.now() ms). */
export const flipsSince = (from: number) => `window.__hd.flips.filter((t) => t >= ${from})`;

/**
 * Source of `framePixels(video, x, y)`: whether the 4×4 pixels at (x, y) of the video's current frame all pass `ok`, read
 * with WebCodecs from the decoded frame's own planes (I420/NV12: BT.601 to RGB; or RGB formats); null where that cannot
 * be done (no VideoFrame, a canvas, another format). Drawing a WebRTC frame onto a canvas converts all of it to RGB first
 * on the tab's main thread, 60 times a second: on a slow 2-core VM the page's frame callbacks then ran 100 ms and more
 * after the frame was shown, and the bench timed its own reading back.
 */
const FRAME_PIXELS = String.raw`const framePixels = async (v, x, y) => {
      if (typeof VideoFrame === 'undefined' || !(v instanceof HTMLVideoElement)) return null;
      let f;
      try { f = new VideoFrame(v); } catch { return null; }
      try {
        const vr = f.visibleRect;
        const rect = { x: vr.x + ((x - 2) & ~1), y: vr.y + ((y - 2) & ~1), width: 4, height: 4 };
        const fmt = f.format;
        if (!['I420', 'I420A', 'NV12', 'RGBA', 'RGBX', 'BGRA', 'BGRX'].includes(fmt)) return null;
        const buf = new Uint8Array(f.allocationSize({ rect }));
        const layout = await f.copyTo(buf, { rect });
        for (let j = 0; j < 4; j++) for (let i = 0; i < 4; i++) {
          let r, gr, b;
          if (fmt.startsWith('RGB') || fmt.startsWith('BGR')) {
            const p = layout[0].offset + j * layout[0].stride + i * 4;
            [r, gr, b] = fmt.startsWith('RGB') ? [buf[p], buf[p + 1], buf[p + 2]] : [buf[p + 2], buf[p + 1], buf[p]];
          } else {
            const Y = buf[layout[0].offset + j * layout[0].stride + i] - 16;
            const c = (j >> 1) * layout[1].stride;
            const [U, V] = fmt === 'NV12'
              ? [buf[layout[1].offset + c + (i >> 1) * 2], buf[layout[1].offset + c + (i >> 1) * 2 + 1]]
              : [buf[layout[1].offset + c + (i >> 1)], buf[layout[2].offset + (j >> 1) * layout[2].stride + (i >> 1)]];
            r = 1.164 * Y + 1.596 * (V - 128);
            gr = 1.164 * Y - 0.392 * (U - 128) - 0.813 * (V - 128);
            b = 1.164 * Y + 2.017 * (U - 128);
          }
          if (!ok(r, gr, b)) return false;
        }
        return true;
      } catch {
        return null;
      } finally {
        f.close();
      }
    };`;

/**
 * Expression: resolves with the time the desktop's frame first shows colour `want` ('r' red, 'g' green, 'b' blue)
 * at desktop pixel (x, y), and the time of the last keydown of `key` (both performance.now() ms), or -1 after 5 s.
 * From the tab's keydown of `key` on, WebRTC: checked on every decoded frame (requestVideoFrameCallback; its
 * presentation time); VNC: on every animation frame, on the canvas noVNC paints. For WebRTC also the time that frame's
 * last packet arrived (receiveTime).
 */
export function awaitColour(want: 'r' | 'g' | 'b', x: number, y: number, key: string): string {
  return String.raw`new Promise((resolve) => {
    const want = ${JSON.stringify(want)}, key = ${JSON.stringify(key)}, X = ${x}, Y = ${y};
    const s = ${SURFACE};
    const c = document.createElement('canvas');
    c.width = 3; c.height = 3;
    const g = c.getContext('2d', { willReadFrequently: true });
    const deadline = performance.now() + 5000;
    const ok = (r, gr, b) => (want === 'r' ? r > 170 && gr < 90 && b < 90 : want === 'g' ? gr > 170 && r < 90 && b < 90 : b > 170 && r < 90 && gr < 90);
    const drawn = () => {
      g.drawImage(s, X - 1, Y - 1, 3, 3, 0, 0, 3, 3);
      const d = g.getImageData(0, 0, 3, 3).data;
      for (let i = 0; i < d.length; i += 4) if (!ok(d[i], d[i + 1], d[i + 2])) return false;
      return true;
    };
    ${FRAME_PIXELS}
    let checks = 0, checkMs = 0;
    const hit = async () => {
      const t = performance.now();
      try {
        return (await framePixels(s, X, Y)) ?? drawn();
      } finally {
        checks++;
        checkMs += performance.now() - t;
      }
    };
    // at: when this page's own thread was called with the frame (its clock, like the driver's press; before the
    // pixels are read back), an upper bound on shown.
    const done = (t, received, at) => {
      const k = window.__hd.keys.filter((e) => e.key === key).pop();
      resolve({ shown: t, at, key: k ? k.t : -1, handled: k ? k.h : -1, received: received || -1, checkMs: checks ? checkMs / checks : -1 });
    };
    const watch = () => {
      if (s.requestVideoFrameCallback) {
        const tick = async (now, meta) => {
          const at = performance.now();
          if (await hit()) return done(meta.presentationTime || now, meta.receiveTime, at);
          if (performance.now() > deadline) return resolve({ shown: -1, key: -1 });
          s.requestVideoFrameCallback(tick);
        };
        s.requestVideoFrameCallback(tick);
      } else {
        const tick = async (now) => {
          const at = performance.now();
          if (await hit()) return done(now, 0, at);
          if (performance.now() > deadline) return resolve({ shown: -1, key: -1 });
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }
    };
    // No frame can show the key before the tab has it: the frames are read only from its keydown on, so the bench's
    // reading back of pixels (on the tab's main thread, every frame) does not delay the key it times.
    const pressed = (e) => {
      if (e.key !== key) return;
      window.removeEventListener('keydown', pressed, true);
      watch();
    };
    window.addEventListener('keydown', pressed, true);
    setTimeout(() => {
      window.removeEventListener('keydown', pressed, true);
      resolve({ shown: -1, key: -1 });
    }, 5000);
  })`;
}

/** Expression: whether the desktop's current frame shows colour `want` at (x, y) (same test as awaitColour). */
export function showsColour(want: 'r' | 'g' | 'b', x: number, y: number): string {
  return String.raw`(() => {
    const s = ${SURFACE};
    if (!s) return false;
    const w = s.videoWidth ?? s.width;
    if (!w) return false;
    const c = document.createElement('canvas');
    c.width = 1; c.height = 1;
    const g = c.getContext('2d', { willReadFrequently: true });
    g.drawImage(s, ${x}, ${y}, 1, 1, 0, 0, 1, 1);
    const [r, gr, b] = g.getImageData(0, 0, 1, 1).data;
    const want = ${JSON.stringify(want)};
    return want === 'r' ? r > 170 && gr < 90 && b < 90 : want === 'g' ? gr > 170 && r < 90 && b < 90 : b > 170 && r < 90 && gr < 90;
  })()`;
}

/** Expression: the agent's timing reports received since `from` (performance.now() ms). */
export const timingSince = (from: number) => `window.__hd.timing.filter((t) => t.at >= ${from})`;
