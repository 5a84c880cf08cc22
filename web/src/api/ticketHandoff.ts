import type { z } from 'zod';
import { TicketAnswer } from '@hyperdesk/contract';
import { requestTicket } from './connect';

/**
 * The first ticket of a Connect tab, fetched by the dashboard that opens it. A new tab has no id token yet: its own
 * ticket waits for a session refresh and then the ticket call, two round trips after the page loaded. The dashboard
 * already has a token, so its Connect click asks for the ticket at once and hands it over while the tab loads
 * (a BroadcastChannel: this origin's own pages only; the tab opens with noopener, so it has no window to ask).
 * The tab races it against its own request; the first ticket wins and the other expires unused (30 s, single use).
 */
const CHANNEL = 'hyperdesk.connect-ticket';
/** How long the dashboard keeps the ticket for a tab that has not asked yet (a ticket lives 30 s). */
const HOLD_MS = 20_000;

type Answer = z.infer<typeof TicketAnswer>;
type Message = { type: 'want'; url: string; id: string } | { type: 'ticket'; id: string; answer: Answer };

const channel = () => (typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(CHANNEL));

/** Dashboard: fetches a ticket for the machine's `url` now and gives it to the first Connect tab that asks for it. */
export function offerTicket(url: string): void {
  const ch = channel();
  if (!ch) return;
  const pending = requestTicket(url).catch(() => null); // refused: the tab asks itself, and says why
  let given = false;
  const close = () => {
    clearTimeout(timer);
    ch.close();
  };
  const timer = setTimeout(close, HOLD_MS);
  ch.onmessage = (e: MessageEvent<Message>) => {
    const m = e.data;
    if (given || m?.type !== 'want' || m.url !== url) return;
    given = true;
    void pending.then((answer) => {
      if (answer) ch.postMessage({ type: 'ticket', id: m.id, answer } satisfies Message);
      close();
    });
  };
}

/** Connect tab: the ticket the opening dashboard fetched for `url`; never settles when no dashboard answers. */
export function ticketFromDashboard(url: string): Promise<Answer> {
  return new Promise((resolve) => {
    const ch = channel();
    if (!ch) return;
    const id = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
    const timer = setTimeout(() => ch.close(), HOLD_MS);
    ch.onmessage = (e: MessageEvent<Message>) => {
      const m = e.data;
      if (m?.type !== 'ticket' || m.id !== id) return;
      clearTimeout(timer);
      ch.close();
      const parsed = TicketAnswer.safeParse(m.answer);
      if (parsed.success) resolve(parsed.data);
    };
    ch.postMessage({ type: 'want', url, id } satisfies Message);
  });
}
