import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** The dashboard's ticket calls, answered when the test says (api/connect requestTicket). */
const calls: { url: string; answer(v: unknown): void; refuse(): void }[] = [];
vi.mock('../src/api/connect', () => ({
  requestTicket: (url: string) =>
    new Promise((answer, refuse) => calls.push({ url, answer, refuse: () => refuse(new Error('refused')) })),
}));

const { offerTicket } = await import('../src/api/ticketHandoff');
const { askDashboard, takeFromOpener, TICKET_SHELF } = await import('../src/early/ticketChannel');

const URL_A = '/v1/slot/connect?packId=a';
const URL_B = '/v1/slot/connect?packId=b';
const ticket = (t: string) => ({ ticket: t, wsPath: `/v1/slot/connect/ws?ticket=${t}`, expiresIn: 30 });
const settle = () => new Promise((r) => setTimeout(r, 0));
/** What a taken ticket's promise holds now: its value, or 'pending'. */
const now = (p: Promise<unknown> | null) => Promise.race([p, settle().then(() => 'pending')]);

describe('the ticket a Connect tab takes from the dashboard that opened it', () => {
  beforeEach(() => {
    // The dashboard's window is this test's global (the shelf lives on it); the tab reads it as its opener.
    vi.stubGlobal('window', globalThis);
    calls.length = 0;
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    delete (globalThis as Record<string, unknown>)[TICKET_SHELF];
  });

  it('is taken once: at once when the dashboard has it', async () => {
    offerTicket(URL_A);
    calls[0]!.answer(ticket('t1'));
    await settle();
    const taken = takeFromOpener(globalThis, URL_A);
    expect(taken).not.toBeNull();
    expect(await now(taken)).toEqual(ticket('t1'));
    expect(takeFromOpener(globalThis, URL_A)).toBeNull(); // given once: a second tab asks for its own
  });

  it('comes the moment the dashboard has it, when taken before', async () => {
    offerTicket(URL_A);
    const taken = takeFromOpener(globalThis, URL_A);
    expect(await now(taken)).toBe('pending');
    expect(takeFromOpener(globalThis, URL_A)).toBeNull(); // already promised to the first tab
    calls[0]!.answer(ticket('t1'));
    expect(await now(taken)).toEqual(ticket('t1'));
  });

  it("is the one for the tab's own machine, and the newer click's", async () => {
    offerTicket(URL_A);
    offerTicket(URL_B);
    offerTicket(URL_A);
    calls.forEach((c, i) => c.answer(ticket(`t${i}`)));
    await settle();
    expect(takeFromOpener(globalThis, '/v1/slot/connect?packId=c')).toBeNull();
    expect(await now(takeFromOpener(globalThis, URL_B))).toEqual(ticket('t1'));
    expect(await now(takeFromOpener(globalThis, URL_A))).toEqual(ticket('t2'));
    expect(takeFromOpener(globalThis, URL_A)).toBeNull();
  });

  it("never comes when the dashboard's call was refused (the tab asks itself and says why)", async () => {
    offerTicket(URL_A);
    const taken = takeFromOpener(globalThis, URL_A);
    calls[0]!.refuse();
    await settle();
    expect(await now(taken)).toBe('pending');
  });

  it('is nothing from an opener without a shelf, of another origin, or none; a shelf answering junk gives nothing', async () => {
    expect(takeFromOpener(null, URL_A)).toBeNull();
    expect(takeFromOpener({}, URL_A)).toBeNull();
    const junk = takeFromOpener({ [TICKET_SHELF]: { take: (_u: string, deliver: (j: string) => void) => (deliver('not json'), true) } }, URL_A);
    expect(await now(junk)).toBe('pending');
    // A cross-origin opener throws on any property read.
    const foreign = new Proxy({}, { get: () => { throw new DOMException('Blocked a frame', 'SecurityError'); } });
    expect(takeFromOpener(foreign, URL_A)).toBeNull();
  });

  it('comes over the channel to a tab without the opener, once: not to a tab that asks after one took it', async () => {
    offerTicket(URL_A);
    const asked = askDashboard(URL_A);
    calls[0]!.answer(ticket('t1'));
    await expect(asked).resolves.toEqual(ticket('t1'));
    expect(takeFromOpener(globalThis, URL_A)).toBeNull();
    offerTicket(URL_B);
    calls[1]!.answer(ticket('t2'));
    expect(await now(takeFromOpener(globalThis, URL_B))).toEqual(ticket('t2'));
    expect(await Promise.race([askDashboard(URL_B), new Promise((r) => setTimeout(() => r('none'), 200))])).toBe('none');
  });
});
