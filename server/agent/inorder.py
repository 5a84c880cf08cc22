"""The viewer's input in the order it was sent, whichever copy comes first.

The input channel is unordered: over SCTP (the data channel's transport) a lost packet holds back everything after it
on an ordered channel until its retransmission, and Chrome's SCTP retransmits a lone message only after its timeout,
400 ms at least. A key press in a lost packet came 450-600 ms late on a link losing 0.5% (bench:stream's slowest
presses). So the tab numbers each message (`seq`, from 0 on each channel), sends the ones that must not be lost
(keys, buttons, wheel, text) twice, a few milliseconds apart, and says in each message which was the last of those
before it (`must`). Pointer moves are sent once: each carries where the pointer is (`m`) or how far it has moved in all
(`r`: sums since the channel opened), so a later move makes up for a lost one.

Here messages are applied in `seq` order. A copy of one already applied is dropped; a move older than one applied is
dropped; a message after a gap waits, unless every message the gap can hold is a move (its `must` is applied already),
then it goes at once. What waits is bounded: past LIMIT messages (a broken or hostile tab), the oldest gap is given up.
A message without `seq` is applied as it comes.
"""
import guard

LIMIT = 256
MAX_SEQ = 2 ** 53


class InOrder:
    def __init__(self, apply, log=lambda _text: None):
        self.apply = apply
        self.log = log
        self.next = 0  # the lowest seq not applied or passed over
        self.waiting = {}  # seq -> message
        self.gaps_given_up = 0

    def take(self, m):
        """One message from the channel; ValueError if its seq or must is not a number in range."""
        if 'seq' not in m:
            self.apply(m)
            return
        q = guard.number(m['seq'], 0, MAX_SEQ)
        m['must'] = guard.number(m.get('must', q - 1), -1, q - 1)
        if q < self.next or q in self.waiting:
            return
        self.waiting[q] = m
        self._drain()
        if len(self.waiting) > LIMIT:
            self.gaps_given_up += 1
            if self.gaps_given_up <= 5 or self.gaps_given_up % 1000 == 0:
                self.log('input: gave up waiting for message %d (%d waiting; %d gaps given up)'
                         % (self.next, len(self.waiting), self.gaps_given_up))
            self.next = min(self.waiting)
            self._drain()

    def _drain(self):
        while self.waiting:
            first = min(self.waiting)
            if first != self.next and self.waiting[first]['must'] >= self.next:
                return  # a message that must not be lost is missing: wait for a copy of it
            m = self.waiting.pop(first)
            self.next = first + 1
            self.apply(m)
