/**
 * The tab's side of the ticket hand-over (api/ticketHandoff has the dashboard's side and the why). No imports: the
 * Connect tab's first script (early/dial.ts) asks with it before the app's code has loaded.
 */
export const TICKET_CHANNEL = 'hyperdesk.connect-ticket';
/** How long a ticket is kept or waited for (a ticket lives 30 s). */
export const HOLD_MS = 20_000;

export type HandoffMessage = { type: 'want'; url: string; id: string } | { type: 'ticket'; id: string; answer: unknown };

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
