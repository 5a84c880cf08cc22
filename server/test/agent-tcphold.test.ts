import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's hold on its ICE-TCP candidates (server/agent/tcphold.py), run in Debian's python3 as the agent
 * runs it: UDP candidates go to the viewer at once, TCP ones wait for the hold's end and go then only if ICE has not
 * connected. The browser tests see both ends: stream.test.ts (UDP works: the path is udp and the TCP ones stay
 * held) and stream-fallback.test.ts (no UDP: the tab reaches the desktop over TCP after the hold).
 */
const AGENT = path.join(import.meta.dirname, '../agent');

const UDP = 'candidate:1 1 UDP 2015363327 10.251.0.22 41009 typ host';
const TCP_ACTIVE = 'candidate:2 1 TCP 1015021823 10.251.0.22 9 typ host tcptype active';
const TCP_PASSIVE = 'candidate:3 1 tcp 1010827519 10.251.0.22 41199 typ host tcptype passive';

/** Feeds the candidates, releases with `connected`, feeds `later`: what went at once, what the release gave, what went after. */
function run(first: string[], connected: boolean, later: string[]): { now: string[]; released: string[]; after: string[] } {
  const script = `
import sys, json
sys.path.insert(0, ${JSON.stringify(AGENT)})
from tcphold import TcpHold
first, connected, later = json.loads(sys.argv[1])
h = TcpHold()
now = [c for c in first if h.offer(0, c)]
released = [c for _, c in h.release(connected)]
after = [c for c in later if h.offer(0, c)]
print(json.dumps({'now': now, 'released': released, 'after': after}))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, JSON.stringify([first, connected, later])], { encoding: 'utf8' }));
}

it('sends UDP candidates at once and holds TCP ones; none of those goes when UDP connected during the hold', () => {
  expect(run([UDP, TCP_ACTIVE, TCP_PASSIVE, ''], true, [])).toEqual({ now: [UDP, ''], released: [], after: [] });
});

it('sends the held TCP candidates, in order, when ICE has not connected by the end of the hold, and later ones at once', () => {
  const lateTcp = TCP_PASSIVE.replace('41199', '41200');
  expect(run([TCP_ACTIVE, UDP, TCP_PASSIVE], false, [lateTcp, UDP])).toEqual({ now: [UDP], released: [TCP_ACTIVE, TCP_PASSIVE], after: [lateTcp, UDP] });
});

it('reads the transport from the candidate line only: an address or a word that says tcp elsewhere is not TCP', () => {
  const tricky = 'candidate:tcp 1 UDP 2015363327 10.251.0.22 41009 typ host generation 0 ufrag tcp';
  expect(run([tricky, 'garbage', 'a b'], true, [])).toEqual({ now: [tricky, 'garbage', 'a b'], released: [], after: [] });
});
