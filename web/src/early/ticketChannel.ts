/**
 * The tab's side of the ticket hand-over (api/ticketHandoff has the dashboard's side and the why). No imports: the
 * Connect tab's first script (early/dial.ts) takes or asks with it before the app's code has loaded.
 */
export const TICKET_CHANNEL = 'hyperdesk.connect-ticket';
/** How long a ticket is kept or waited for (a ticket lives 30 s). */
export const HOLD_MS = 20_000;
/** Where the opening dashboard keeps the tickets it has fetched, on its own window (api/ticketHandoff). */
export const TICKET_SHELF = '__hyperdeskTickets';

export type HandoffMessage = { type: 'want'; url: string; id: string } | { type: 'ticket'; id: string; answer: unknown };

/**
 * The dashboard's shelf: whether it holds (or is fetching) a ticket for `url` not given yet; if so it is given to
 * `deliver` as JSON, once: at once when it is here, else when it comes (never, if the dashboard's call fails).
 */
export interface TicketShelf {
  take(url: string, deliver: (json: string) => void): boolean;
}

/**
 * The ticket the opening dashboard holds or is fetching for `url`, taken from its window before the tab drops its
 * opener (same origin and renderer process: a plain call, no message round trip), or null when it has none (no
 * opener, another origin, none asked for: the tab asks over the channel). The promise never settles when the
 * dashboard's call fails. Parsed here, so nothing of the dashboard's realm is kept; unchecked, like a ticket that
 * comes over the channel.
 */
export function takeFromOpener(opener: unknown, url: string): Promise<unknown> | null {
  try {
    const shelf = (opener as Record<string, TicketShelf | undefined> | null)?.[TICKET_SHELF];
    if (typeof shelf?.take !== 'function') return null;
    let resolve: (answer: unknown) => void = () => {};
    const ticket = new Promise<unknown>((r) => (resolve = r));
    const deliver = (json: string) => {
      try {
        resolve(JSON.parse(json));
      } catch {
        /* not a ticket: the tab's own request goes on */
      }
    };
    return shelf.take(url, deliver) === true ? ticket : null;
  } catch {
    return null; // an opener of another origin throws on any access
  }
}

/** The ticket the opening dashboard fetched for `url`, as it sent it (unchecked); never settles when none answers. */
export function askDashboard(url: string): Promise<unknown> {
  return new Promise((resolve) => {
    if (typeof BroadcastChannel === 'undefined') return;
    const ch = new BroadcastChannel(TICKET_CHANNEL);
    const id = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
    const timer = setTimeout(() => ch.close(), HOLD_MS);
    ch.onmessage = (e: MessageEvent<HandoffMessage>) => {
      const m = e.data;
      if (m?.type !== 'ticket' || m.id !== id) return;
      clearTimeout(timer);
      ch.close();
      resolve(m.answer);
    };
    ch.postMessage({ type: 'want', url, id } satisfies HandoffMessage);
  });
}
