import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's copy of each retransmission request (server/agent/rtxcopy.py), its rule run in Debian's
 * python3 as the agent runs it: a viewer's request is copied once, the copy is not copied again, and other upstream
 * events pass. The pipeline side runs in the desktop: stream.test.ts checks the agent put its probe on webrtcbin's RTX
 * sender, and bench:stream at a lossy link (LOSS=0.05) counts the retransmissions the tab got against its NACKs.
 */
const AGENT = path.join(import.meta.dirname, '../agent');

function wantsCopy(name: string, fields: string[]): boolean {
  const script = `
import sys, json
sys.path.insert(0, ${JSON.stringify(AGENT)})
from rtxcopy import wants_copy
name, fields = json.loads(sys.argv[1])
print(json.dumps(wants_copy(name, lambda f: f in fields)))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, JSON.stringify([name, fields])], { encoding: 'utf8' }));
}

it('copies a viewer retransmission request once, and never a copy', () => {
  expect(wantsCopy('GstRTPRetransmissionRequest', ['seqnum', 'ssrc'])).toBe(true);
  expect(wantsCopy('GstRTPRetransmissionRequest', ['seqnum', 'ssrc', 'hyperdesk-copy'])).toBe(false);
});

it('lets every other upstream event pass uncopied', () => {
  expect(wantsCopy('GstForceKeyUnit', ['all-headers'])).toBe(false);
  expect(wantsCopy('GstRTPCollision', ['ssrc'])).toBe(false);
});
