/**
 * The first script's peer connection (early/dial.ts). It is made with the early socket (its construction and DTLS
 * certificate take a while in a tab that has made none yet), takes the gateway's ICE servers when they come, and
 * answers the agent's offer as soon as it arrives, while the app's code may still be loading. The page's RtcStream
 * then adopts it (RtcStream.adopt): answered, with the events it has had; or still waiting for the offer, to answer
 * it itself. Same answer as the page's own: the offer as it came, the gateway's ICE servers, one bundle.
 */
export interface EarlyPeer {
  pc: RTCPeerConnection;
  /** Whether it has taken the agent's offer (and sends the answer itself). */
  answered: boolean;
  /** Track and data channel events the connection had before the page adopted it, in order. */
  had: (RTCTrackEvent | RTCDataChannelEvent)[];
  /** The gateway messages this peer has taken (its offer, the agent's candidates): the page does not apply them again. */
  taken: WeakSet<MessageEvent>;
}

type Send = (msg: { type: string; [field: string]: unknown }) => void;

interface Heard {
  type?: string;
  sdp?: unknown;
  iceServers?: unknown;
  candidate?: unknown;
  sdpMLineIndex?: unknown;
}

/** Watches the early socket's messages for the peer connection; `stop` hands it over (its handlers go). */
export function answerEarly(ws: WebSocket, send: Send): { peer: EarlyPeer; stop(): void } {
  const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
  const peer: EarlyPeer = { pc, answered: false, had: [], taken: new WeakSet() };
  pc.ontrack = (e) => peer.had.push(e);
  pc.ondatachannel = (e) => peer.had.push(e);
  pc.onicecandidate = sendCandidates(send);
  const onMessage = (e: MessageEvent) => {
    const msg = parse(e.data);
    if (msg?.type === 'rtc-config' && Array.isArray(msg.iceServers) && !peer.answered) configure(pc, msg.iceServers as RTCIceServer[]);
    else if (msg?.type === 'offer' && typeof msg.sdp === 'string' && !peer.answered) {
      peer.answered = true;
      peer.taken.add(e);
      answer(pc, msg.sdp, send);
    } else if (msg?.type === 'ice' && peer.answered && typeof msg.candidate === 'string') {
      peer.taken.add(e);
      const sdpMLineIndex = typeof msg.sdpMLineIndex === 'number' ? msg.sdpMLineIndex : 0;
      void pc.addIceCandidate({ candidate: msg.candidate, sdpMLineIndex }).catch(() => undefined);
    }
  };
  ws.addEventListener('message', onMessage);
  return {
    peer,
    stop() {
      ws.removeEventListener('message', onMessage);
      pc.ontrack = null;
      pc.ondatachannel = null;
      pc.onicecandidate = null;
    },
  };
}

/** The connection's own candidates, as the gateway takes them (the page's RtcStream sends them the same way). */
export function sendCandidates(send: (msg: { type: 'ice'; candidate: string; sdpMLineIndex: number }) => void) {
  return (e: RTCPeerConnectionIceEvent) => {
    if (e.candidate?.candidate) send({ type: 'ice', candidate: e.candidate.candidate, sdpMLineIndex: e.candidate.sdpMLineIndex ?? 0 });
  };
}

/** The gateway's ICE servers (for the relay), on a connection that has not gathered yet. */
export function configure(pc: RTCPeerConnection, iceServers: RTCIceServer[]): void {
  try {
    pc.setConfiguration({ iceServers, bundlePolicy: 'max-bundle' });
  } catch {
    /* servers the browser refuses: the connection goes on without them, as the page's own would fail to start */
  }
}

function parse(data: unknown): Heard | null {
  if (typeof data !== 'string' || data.length > 200_000) return null;
  try {
    const msg = JSON.parse(data) as unknown;
    return msg && typeof msg === 'object' ? (msg as Heard) : null;
  } catch {
    return null;
  }
}

function answer(pc: RTCPeerConnection, sdp: string, send: Send): void {
  void (async () => {
    await pc.setRemoteDescription({ type: 'offer', sdp });
    const local = await pc.createAnswer();
    await pc.setLocalDescription(local);
    // Sent even when the page has adopted the connection meanwhile: this answer is for the offer it adopted.
    if (pc.signalingState === 'closed') return;
    send({ type: 'answer', sdp: pc.localDescription?.sdp ?? local.sdp ?? '' });
    performance.mark('hyperdesk:early-answer');
  })().catch(() => pc.close()); // a closed connection: the page's media timer falls back as for any failed answer
}
