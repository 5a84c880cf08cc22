import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's input rules (server/agent/guard.py), run in Debian's python3 as the agent runs them: numbers
 * a viewer sends are bounded integers (never an OverflowError from 1e400 or a 5,000-digit number), renegotiations
 * have a budget, and no ICE server or remote candidate may name the machine itself. The browser test
 * stream-hostile sends the same kinds of messages to a real agent.
 */
const AGENT = path.join(import.meta.dirname, '../agent');

function py(script: string): unknown {
  const out = execFileSync('/usr/bin/python3', ['-c', `import sys, json\nsys.path.insert(0, ${JSON.stringify(AGENT)})\nimport guard\n${script}`], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

it('numbers: integers within the range pass; bool, NaN, ±inf, 1e400, 10**4000 and out-of-range are refused', () => {
  const r = py(`
def check(v, lo=0, hi=100):
    try:
        return guard.number(v, lo, hi)
    except ValueError:
        return 'refused'
vals = [5, 7.9, True, float('nan'), float('inf'), -float('inf'), json.loads('1e400'), 10**4000, 101, -1, '5', None]
print(json.dumps([check(v) for v in vals]))`);
  expect(r).toEqual([5, 7, 'refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'refused']);
});

it('a renegotiation budget: a burst of 5, then one per interval', () => {
  const r = py(`
now = [0.0]
b = guard.Budget(5, 10.0, clock=lambda: now[0])
burst = [b.take() for _ in range(7)]
now[0] = 10.5
later = [b.take(), b.take()]
print(json.dumps([burst, later]))`);
  expect(r).toEqual([
    [true, true, true, true, true, false, false],
    [true, false],
  ]);
});

it('remote candidates and ICE servers naming loopback, link-local, unspecified or the machine’s own addresses are refused', () => {
  const r = py(`
own = {__import__('ipaddress').ip_address('10.251.0.7')}
cands = ['127.0.0.1', '127.8.9.1', '::1', '169.254.169.254', 'fe80::1', '0.0.0.0', '::ffff:127.0.0.1', '10.251.0.7', '224.0.0.251',
         '10.251.0.1', '203.0.113.9', '2001:db8::5', 'a1b2.local']
c = [guard.candidate_ok('candidate:1 1 udp 2122260223 %s 50000 typ host' % a, own) for a in cands]
bad = [guard.candidate_ok(x, own) for x in ['', 'x' * 2000, 'candidate:1 1 udp 1 10.0.0.1 99999 typ host', 'candidate:1 1 udp 1 10.0.0.1 80 host', 42]]
urls = ['stun:127.0.0.1:3478', 'turn:localhost:3478?transport=udp', 'turn:[::1]:3478', 'stun:169.254.169.254', 'turns:user@10.251.0.7:5349',
        'stun:stun.example.org:19302', 'turn:203.0.113.9:3478?transport=tcp', 'turns:[2001:db8::5]:5349', 'nonsense', 7]
s = [guard.server_host_ok(u, own) for u in urls]
print(json.dumps([c, bad, s]))`);
  expect(r).toEqual([
    [false, false, false, false, false, false, false, false, false, true, true, true, true],
    [false, false, false, false, false],
    [false, false, false, false, false, true, true, true, false, false],
  ]);
});
