import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * What the streaming agent changes in webrtcbin's offer (server/agent/offer.py), run in Debian's python3 as the agent
 * runs it. The browser test stream.test.ts checks DTLS's roles in Chromium: the tab opens DTLS (offer.py says why).
 */
const AGENT = path.join(import.meta.dirname, '../agent');

function sent(sdp: string): string {
  return execFileSync('/usr/bin/python3', ['-c', `import sys\nsys.path.insert(0, ${JSON.stringify(AGENT)})\nimport offer\nsys.stdout.write(offer.with_rtx_time(sys.stdin.read()))`], {
    input: sdp,
    encoding: 'utf8',
  });
}

// As webrtcbin (GStreamer 1.22) writes an offer's video section, trimmed.
const WEBRTCBIN_OFFER = [
  'v=0',
  'm=video 9 UDP/TLS/RTP/SAVPF 96 97',
  'a=setup:actpass',
  'a=rtpmap:96 H264/90000',
  'a=rtpmap:97 rtx/90000',
  'a=fmtp:97 apt=96',
  'm=application 0 UDP/DTLS/SCTP webrtc-datachannel',
  'a=setup:actpass',
  '',
].join('\r\n');

it('DTLS roles stay as webrtcbin offers them (actpass: the browser opens DTLS)', () => {
  expect(sent(WEBRTCBIN_OFFER).match(/a=setup:actpass\r\n/g)).toHaveLength(2);
});

it('each RTX format gets rtx-time=125, and a stated rtx-time is replaced rather than doubled', () => {
  expect(sent(WEBRTCBIN_OFFER)).toContain('a=fmtp:97 apt=96;rtx-time=125\r\n');
  const stated = sent(WEBRTCBIN_OFFER.replace('apt=96', 'apt=96;rtx-time=3000'));
  expect(stated).toContain('a=fmtp:97 apt=96;rtx-time=125\r\n');
  expect(stated.match(/rtx-time/g)).toHaveLength(1);
});
