import { describe, expect, it } from 'vitest';
import { inputOrder } from '../src/pages/Connect/inputorder';

function harness() {
  const sent: Record<string, unknown>[] = [];
  const later: (() => void)[] = [];
  const order = inputOrder(
    (text) => sent.push(JSON.parse(text) as Record<string, unknown>),
    (fn) => later.push(fn),
  );
  const flush = () => later.splice(0).forEach((fn) => fn());
  return { sent, order, flush };
}

describe("the tab's input order (the agent applies by seq: server/agent/inorder.py)", () => {
  it('numbers each message and names the last one before it that must not be lost; keys go again a moment later, moves once', () => {
    const { sent, order, flush } = harness();
    order.send({ t: 'k', s: 97, d: true });
    order.send({ t: 'm', x: 5, y: 6 });
    order.send({ t: 'b', b: 1, d: true });
    expect(sent).toEqual([
      { t: 'k', s: 97, d: true, seq: 0, must: -1 },
      { t: 'm', x: 5, y: 6, seq: 1, must: 0 },
      { t: 'b', b: 1, d: true, seq: 2, must: 0 },
    ]);
    flush();
    expect(sent.slice(3)).toEqual([sent[0], sent[2]]);
  });

  it('relative moves go as the sums since the channel opened, so the next one makes up for a lost one', () => {
    const { sent, order } = harness();
    order.moveBy(3, -2);
    order.moveBy(0.4, 0);
    order.moveBy(0.4, 1);
    expect(sent.map((m) => [m.t, m.x, m.y, m.seq])).toEqual([
      ['r', 3, -2, 0],
      ['r', 3, -2, 1],
      ['r', 4, -1, 2],
    ]);
  });

  it('a big message (a pasted clipboard) goes once', () => {
    const { sent, order, flush } = harness();
    order.send({ t: 'clip', text: 'x'.repeat(600) });
    flush();
    expect(sent).toHaveLength(1);
  });
});
