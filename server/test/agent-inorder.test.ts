import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

/**
 * The streaming agent's input order (server/agent/inorder.py), in Debian's python3 as the agent runs it: the tab's
 * numbered messages are applied in their order whatever order the unordered channel brings them in, a second copy
 * is dropped, moves never wait for a lost move, anything else waits for its copy, and a hostile tab cannot make the
 * agent hold more than LIMIT messages. The web side: web/test/inputorder.test.ts; on a real link: bench:stream.
 */
const AGENT = path.join(import.meta.dirname, '../agent');

/** Feeds the messages (JSON) to an InOrder and answers what was applied, as `t` + `seq` ('k3'), then its state. */
function order(messages: object[]): { applied: string[]; next: number; waiting: number; givenUp: number } {
  const script = `import sys, json
sys.path.insert(0, ${JSON.stringify(AGENT)})
import inorder
applied = []
o = inorder.InOrder(lambda m: applied.append('%s%s' % (m.get('t'), m.get('seq', ''))))
for m in json.loads(sys.stdin.read()):
    try:
        o.take(m)
    except ValueError:
        applied.append('refused')
print(json.dumps({'applied': applied, 'next': o.next, 'waiting': len(o.waiting), 'givenUp': o.gaps_given_up}))`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script], { input: JSON.stringify(messages), encoding: 'utf8' }));
}

const key = (seq: number, must = seq - 1) => ({ t: 'k', s: 97, d: true, seq, must });
const move = (seq: number, must: number) => ({ t: 'm', x: seq, y: seq, seq, must });

it('applies in the order sent: a key that overtakes the one before it waits for it; the copies that come after are dropped', () => {
  const r = order([key(0), key(2), key(1), key(2), key(0), key(1)]);
  expect(r.applied).toEqual(['k0', 'k1', 'k2']);
  expect(r).toMatchObject({ next: 3, waiting: 0 });
});

it('a lost move holds nothing back, and comes too late to be applied; a lost key holds back what follows it', () => {
  // 0 key, 1 move (lost, comes last), 2 move, 3 key: 2 and 3 go at once, 1 is old when it comes.
  expect(order([key(0), move(2, 0), key(3, 0), move(1, 0)]).applied).toEqual(['k0', 'm2', 'k3']);
  // 0 key (lost at first), 1 move, 2 key: nothing before the key's copy.
  const r = order([move(1, 0), key(2, 0), key(0)]);
  expect(r.applied).toEqual(['k0', 'm1', 'k2']);
});

it('messages without a number are applied as they come; bad numbers are refused', () => {
  const r = order([{ t: 'reset' }, { t: 'k', seq: Number.MAX_VALUE }, { t: 'k', seq: -1 }, { t: 'k', seq: 'x' }, { t: 'k', seq: 0, must: 5 }, { t: 'k', seq: 2 ** 60 }]);
  expect(r.applied).toEqual(['reset', 'refused', 'refused', 'refused', 'refused', 'refused']);
  expect(r).toMatchObject({ next: 0, waiting: 0 });
});

it('a tab that never sends the message everything waits for: at most LIMIT wait, then the gap is given up', () => {
  const messages = Array.from({ length: 300 }, (_, i) => key(i + 1));
  const r = order(messages);
  expect(r.givenUp).toBe(1);
  expect(r.applied.length).toBe(300); // given up at the 257th: all of them go, in order
  expect(r.applied.slice(0, 3)).toEqual(['k1', 'k2', 'k3']);
  expect(r.waiting).toBe(0);
});
