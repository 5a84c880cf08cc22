/**
 * The tab's side of the input channel's order (the agent's side: server/agent/inorder.py). The channel is unordered,
 * so a lost packet holds back only itself: over an ordered one, a key press in a lost packet waited for SCTP's
 * retransmission timeout (400 ms at least) with everything after it. Each message gets its number (`seq`, from 0) and
 * the number of the last message before it that must not be lost (`must`); those (keys, buttons, wheel, text, size)
 * go twice, AGAIN_MS apart, so one lost copy costs milliseconds. Moves go once: an absolute move says where the pointer
 * is, a relative one (pointer lock) how far it has moved since the channel opened, so the next move makes up for a
 * lost one. Big messages (a pasted clipboard) go once: SCTP still retransmits them.
 */
export const AGAIN_MS = 4;
/** Messages longer than this are not sent twice. */
const SMALL = 512;

export interface InputOrder {
  /** Numbers and sends one message (`t` says its kind). */
  send(msg: Record<string, unknown>): void;
  /** A relative move (pointer lock): sent as the sums since the channel opened. */
  moveBy(dx: number, dy: number): void;
}

export function inputOrder(send: (text: string) => void, later: (fn: () => void) => void = (fn) => setTimeout(fn, AGAIN_MS)): InputOrder {
  let seq = 0;
  let lastKept = -1;
  const moved = { x: 0, y: 0 };
  const order: InputOrder = {
    send(msg) {
      const text = JSON.stringify({ ...msg, seq, must: lastKept });
      const isMove = msg.t === 'm' || msg.t === 'r';
      if (!isMove) lastKept = seq;
      seq++;
      send(text);
      if (!isMove && text.length <= SMALL) later(() => send(text));
    },
    moveBy(dx, dy) {
      moved.x += dx;
      moved.y += dy;
      order.send({ t: 'r', x: Math.round(moved.x), y: Math.round(moved.y) });
    },
  };
  return order;
}
