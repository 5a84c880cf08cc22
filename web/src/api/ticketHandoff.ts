import type { z } from 'zod';
import { TicketAnswer } from '@hyperdesk/contract';
import { askDashboard, HOLD_MS, TICKET_CHANNEL, type HandoffMessage } from '../early/ticketChannel';
import { requestTicket } from './connect';

/**
 * The first ticket of a Connect tab, fetched by the dashboard that opens it. A new tab has no id token yet: its own
 * ticket waits for a session refresh and then the ticket call, two round trips after the page loaded. The dashboard
 * already has a token, so its Connect click asks for the ticket at once and hands it over while the tab loads
 * (a BroadcastChannel: this origin's own pages only; the tab drops its opener at once, so it has no window to ask).
 * The tab asks from its first script (early/dial.ts) and races it against its own request; the first ticket wins
 * and the other expires unused (30 s, single use).
 */
type Answer = z.infer<typeof TicketAnswer>;

/** Dashboard: fetches a ticket for the machine's `url` now and gives it to the first Connect tab that asks for it. */
export function offerTicket(url: string): void {
  if (typeof BroadcastChannel === 'undefined') return;
  const ch = new BroadcastChannel(TICKET_CHANNEL);
  const pending = requestTicket(url).catch(() => null); // refused: the tab asks itself, and says why
  let given = false;
  const close = () => {
    clearTimeout(timer);
    ch.close();
  };
  const timer = setTimeout(close, HOLD_MS);
  ch.onmessage = (e: MessageEvent<HandoffMessage>) => {
    const m = e.data;
    if (given || m?.type !== 'want' || m.url !== url) return;
    given = true;
    void pending.then((answer) => {
      if (answer) ch.postMessage({ type: 'ticket', id: m.id, answer } satisfies HandoffMessage);
      close();
    });
  };
}

/**
 * Connect tab: the ticket the opening dashboard fetched for `url` (asked for now, or the ask the tab's first script
 * already made); never settles when no dashboard answers or the answer is not a ticket.
 */
export function ticketFromDashboard(url: string, asked: Promise<unknown> = askDashboard(url)): Promise<Answer> {
  return asked.then((answer) => {
    const parsed = TicketAnswer.safeParse(answer);
    return parsed.success ? parsed.data : new Promise<never>(() => {});
  });
}
