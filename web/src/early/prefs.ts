/** The connect tab's remembered choices (localStorage), read by its first script and by the page. No imports. */
export type Transport = 'webrtc' | 'vnc';
export type Quality = 'auto' | 'high' | 'medium' | 'low';

export const TRANSPORT_KEY = 'hyperdesk.connect.transport';
export const QUALITY_KEY = 'hyperdesk.connect.quality';
const QUALITIES: readonly Quality[] = ['auto', 'high', 'medium', 'low'];

/** The transport the user last chose (WebRTC unless they switched to VNC). */
export function preferredTransport(): Transport {
  try {
    return localStorage.getItem(TRANSPORT_KEY) === 'vnc' ? 'vnc' : 'webrtc';
  } catch {
    return 'webrtc';
  }
}

/** The video quality the user last chose (Auto unless they picked one). */
export function preferredQuality(): Quality {
  try {
    const q = localStorage.getItem(QUALITY_KEY);
    return QUALITIES.find((x) => x === q) ?? 'auto';
  } catch {
    return 'auto';
  }
}

/** The video codecs this browser decodes, best first (H.264 is cheapest for the agent to encode). */
export function codecs(): ('h264' | 'vp8')[] {
  const caps = typeof RTCRtpReceiver !== 'undefined' ? RTCRtpReceiver.getCapabilities?.('video') : null;
  const types = new Set((caps?.codecs ?? []).map((c) => c.mimeType.toLowerCase()));
  const out: ('h264' | 'vp8')[] = [];
  if (types.has('video/h264')) out.push('h264');
  if (types.has('video/vp8') || !out.length) out.push('vp8');
  return out;
}

/**
 * The stream's start, put in the gateway socket's URL (the gateway starts the stream as soon as the session opens:
 * nothing waits for the page to be free to send it).
 */
export function startQuery(quality: Quality): string {
  return `&codecs=${codecs().join(',')}&quality=${quality}`;
}
