import type { z } from 'zod';
import { TicketAnswer } from '@hyperdesk/contract';
import { askDashboard, HOLD_MS, TICKET_CHANNEL, TICKET_SHELF, type HandoffMessage, type TicketShelf } from '../early/ticketChannel';
import { requestTicket } from './connect';

/**
 * The first ticket of a Connect tab, fetched by the dashboard that opens it. A new tab has no id token yet: its own
 * ticket waits for a session refresh and then the ticket call, two round trips after the page loaded. The dashboard
 * already has a token, so its Connect click asks for the ticket at once and hands it over while the tab loads. The
 * tab's first script (early/dial.ts) takes it from this window's shelf before it drops its opener (the tab is opened
 * with its opener, in this renderer process: a plain call, and the ticket comes the moment this window has it, where
 * a message over the channel took 18-41 ms more while the tab loaded beside this page). A tab without the opener (one
 * opened by hand, or by a dashboard reloaded meanwhile) asks over a BroadcastChannel (this origin's own pages only).
 * Either way the tab races it against its own request; the first ticket wins and the other expires unused (30 s,
 * single use). Each ticket is given to one tab.
 */
type Answer = z.infer<typeof TicketAnswer>;

/** Tickets fetched for the Connect tabs this window opened, by url: each gives itself to one tab, or says no. */
const shelved = new Map<string, { take(deliver: (json: string) => void): boolean; close(): void }>();

/** Puts up this window's shelf, which the tabs it opens read through their opener (early/ticketChannel takeFromOpener). */
function ensureShelf(): void {
  const own = window as unknown as Record<string, TicketShelf | undefined>;
  own[TICKET_SHELF] ??= { take: (url, deliver) => shelved.get(url)?.take(deliver) ?? false };
}

/** Dashboard: fetches a ticket for the machine's `url` now and gives it to the first Connect tab that asks for it. */
export function offerTicket(url: string): void {
  const pending = requestTicket(url).catch(() => null); // refused: the tab asks itself, and says why
  const ch = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(TICKET_CHANNEL);
  let given = false;
  /** To the first tab that takes it, off the shelf or over the channel, once the answer is here (a refusal: none). */
  const give = (deliver: (answer: Answer) => void): boolean => {
    if (given) return false;
    given = true;
    void pending.then((answer) => {
      try {
        if (answer) deliver(answer);
      } catch {
        /* the tab closed meanwhile */
      }
      close(); // after the channel's answer went out
    });
    return true;
  };
  const entry = { take: (deliver: (json: string) => void) => give((answer) => deliver(JSON.stringify(answer))), close };
  function close() {
    clearTimeout(timer);
    ch?.close();
    if (shelved.get(url) === entry) shelved.delete(url);
  }
  const timer = setTimeout(close, HOLD_MS);
  ensureShelf();
  shelved.get(url)?.close(); // a newer click for the same machine replaces an older one's ticket (it expires unused)
  shelved.set(url, entry);
  if (!ch) return;
  ch.onmessage = (e: MessageEvent<HandoffMessage>) => {
    const m = e.data;
    if (m?.type === 'want' && m.url === url) give((answer) => ch.postMessage({ type: 'ticket', id: m.id, answer } satisfies HandoffMessage));
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
