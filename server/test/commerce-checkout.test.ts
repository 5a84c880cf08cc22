import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { builtinCheckoutSessions, orders } from '../src/db/schema/index';
import { getOrCreateSecret } from '../src/lib/secrets';
import { manualClock } from '../src/lib/clock';
import { signPayload } from '../src/modules/billing/providers/signature';
import { startTestServer, type TestServer } from './harness';
import { makeUser, pathOf, rechargeBody, submitCard, type TestUser } from './commerce-fixtures';

const clock = manualClock(new Date());
let s: TestServer;
let user: TestUser;
let secret: string;

beforeAll(async () => {
  s = await startTestServer({ clock });
  user = await makeUser(s);
  secret = await getOrCreateSecret(s.database.db, 'builtin-payments-webhook');
});
afterAll(async () => s.close());

async function checkout(packId = 'uk-unreal-10h') {
  const res = await s.call('POST', '/v1/user/wallet/recharge', { token: user.token, body: rechargeBody(s, packId) });
  expect(res.status).toBe(200);
  const path = pathOf(res.body.url);
  const sessionId = path.split('/').pop()!;
  const [o] = await s.database.db.select().from(orders).where(eq(orders.providerSessionId, sessionId));
  return { path, sessionId, orderId: o!.id };
}
const orderOf = async (id: string) => (await s.database.db.select().from(orders).where(eq(orders.id, id)))[0]!;
const creditsOf = async (orderId: string) =>
  (await s.database.db.execute(sql`select minutes from ledger_entries where order_id = ${orderId}`)).rows.map((r) => Number((r as { minutes: number }).minutes));
const webhook = (payload: string, signature?: string) =>
  fetch(`${s.base}/v1/payments/webhook/builtin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) },
    body: payload,
  });
const event = (id: string, sessionId: string, type = 'checkout.session.completed') =>
  JSON.stringify({ id, object: 'event', type, data: { object: { id: sessionId, object: 'checkout.session' } } });

describe('built-in hosted checkout', () => {
  it('renders the page with the amount, the pack and a script-free form', async () => {
    const { path } = await checkout('uk-unreal-10h');
    const res = await fetch(s.base + path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await res.text();
    expect(html).toContain('£14.99');
    expect(html).toContain('10 hours · Unreal Engine · United Kingdom');
    expect(html).toContain(`<form method="post" action="${path}/pay"`);
    for (const name of ['number', 'exp', 'cvc', 'name']) expect(html).toContain(`name="${name}"`);
    expect(html).toContain('Pay £14.99');
    expect(html).toContain('Cancel and return to Hyperdesk');
    expect(html).not.toMatch(/<script|style="/i);
    const css = await fetch(`${s.base}/checkout/assets/checkout.css`);
    expect(css.headers.get('content-type')).toContain('text/css');
    expect((await fetch(`${s.base}/checkout/cs_bi_nope`)).status).toBe(404);
  });

  it('re-renders with an error for an invalid number, past expiry, bad CVC, missing name or a non-test card', async () => {
    const { path, orderId } = await checkout();
    const cases: [Record<string, string>, string][] = [
      [{ number: '4242 4242 4242 4241' }, 'Your card number is invalid.'],
      [{ number: '12' }, 'Your card number is invalid.'],
      [{ number: '4242424242424242', exp: '01/20' }, "Your card's expiration date is in the past."],
      [{ number: '4242424242424242', exp: '13/40' }, "Your card's expiration month is invalid."],
      [{ number: '4242424242424242', exp: 'soon' }, "Your card's expiration date is incomplete."],
      [{ number: '4242424242424242', cvc: '12' }, "Your card's security code is invalid."],
      [{ number: '4242424242424242', name: '  ' }, 'Enter the name on your card.'],
      [{ number: '4111 1111 1111 1111' }, 'This is a test checkout'],
    ];
    for (const [card, message] of cases) {
      const res = await submitCard(s.base, path, card as { number: string });
      expect(res.status, message).toBe(422);
      expect(res.html).toContain(message.replace(/'/g, '&#39;'));
    }
    const bad = await submitCard(s.base, path, { number: '<script>x</script>' });
    expect(bad.html).not.toContain('<script>x');
    expect((await orderOf(orderId)).status).toBe('pending');
    expect(await creditsOf(orderId)).toEqual([]);
  });

  it('pays with 4242…: redirects to success_url?orderId=, the signed webhook credits once', async () => {
    const { path, orderId } = await checkout('uk-unreal-25h');
    const pushed: string[] = [];
    const unsubscribe = s.app.ctx.events.subscribe(user.id, (e) => pushed.push(e.type));
    const res = await submitCard(s.base, path, { number: '4242 4242 4242 4242' });
    unsubscribe();
    expect(pushed).toEqual(['balance']);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${s.config.publicUrl}/success?orderId=${orderId}`);
    const o = await orderOf(orderId);
    expect(o).toMatchObject({ status: 'paid', paymentMethod: 'Visa •••• 4242' });
    expect(o.fulfilledAt).not.toBeNull();
    expect(await creditsOf(orderId)).toEqual([25 * 60]);
    const [delivered] = (await s.database.db.execute(sql`select delivered_at from payment_webhook_outbox where event_id like ${'evt_' + path.split('/').pop() + '%'}`)).rows;
    expect((delivered as { delivered_at: unknown }).delivered_at).not.toBeNull();

    // Paying again, reloading the page, or a second submit: nothing more is charged or credited.
    expect((await submitCard(s.base, path, { number: '4242424242424242' })).location).toBe(res.location);
    const again = await fetch(s.base + path, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(await creditsOf(orderId)).toEqual([25 * 60]);
  });

  it('declines 4000 0000 0000 0002: order failed, nothing credited; Retry Payment can still pay', async () => {
    const { path, orderId } = await checkout();
    const res = await submitCard(s.base, path, { number: '4000 0000 0000 0002' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${s.config.publicUrl}/failed`);
    expect((await orderOf(orderId)).status).toBe('failed');
    expect(await creditsOf(orderId)).toEqual([]);
    const status = await s.call('POST', '/v1/user/order/status', { token: user.token, body: { orderId } });
    expect(status.body.status).toBe('failed');

    const page = await (await fetch(s.base + path)).text();
    expect(page).toContain('Your last payment did not go through.');
    expect((await submitCard(s.base, path, { number: '4242424242424242' })).status).toBe(303);
    expect((await orderOf(orderId)).status).toBe('paid');
    expect(await creditsOf(orderId)).toEqual([600]);
  });

  it('cancel fails the order and returns to cancel_url', async () => {
    const { path, orderId } = await checkout();
    const res = await fetch(`${s.base}${path}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${s.config.publicUrl}/failed`);
    expect((await orderOf(orderId)).status).toBe('failed');
  });

  it('expires unpaid sessions after 24 hours', async () => {
    const { path, orderId, sessionId } = await checkout();
    const start = clock.now();
    clock.set(new Date(start.getTime() + 25 * 3_600_000));
    expect((await fetch(s.base + path)).status).toBe(410);
    const job = s.app.ctx.jobs.find((j) => j.name === 'builtin-checkout-expiry')!;
    await job.runOnce();
    const [session] = await s.database.db.select().from(builtinCheckoutSessions).where(eq(builtinCheckoutSessions.id, sessionId));
    expect(session!.status).toBe('expired');
    expect((await orderOf(orderId)).status).toBe('expired');
    expect((await submitCard(s.base, path, { number: '4242424242424242' })).status).toBe(410);
    expect(await creditsOf(orderId)).toEqual([]);
    clock.set(start);
  });
});

describe('builtin webhook endpoint', () => {
  it('verifies the signature on the raw body, with a 300 s tolerance', async () => {
    const { sessionId } = await checkout();
    const payload = event('evt_sig_1', sessionId);
    expect((await webhook(payload)).status).toBe(400);
    expect((await webhook(payload, signPayload(payload, 'wrong-secret', clock.now()))).status).toBe(400);
    expect((await webhook(payload + ' ', signPayload(payload, secret, clock.now()))).status).toBe(400);
    const old = await webhook(payload, signPayload(payload, secret, new Date(clock.now().getTime() - 301_000)));
    expect(old.status).toBe(400);
    expect((await old.json()).message).toBe('Webhook timestamp is outside the tolerance.');
    const ok = await webhook(payload, signPayload(payload, secret, new Date(clock.now().getTime() - 200_000)));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ received: true, duplicate: false });
    const dup = await webhook(payload, signPayload(payload, secret, clock.now()));
    expect(await dup.json()).toEqual({ received: true, duplicate: true });
    expect((await fetch(`${s.base}/v1/payments/webhook/paypal`, { method: 'POST', body: payload })).status).toBe(400);
  });

  it('converges from the provider truth, not from what the event claims', async () => {
    const { sessionId, orderId } = await checkout();
    // A correctly signed "completed" event for a session nobody paid changes nothing.
    const payload = event('evt_claims_paid', sessionId);
    expect((await webhook(payload, signPayload(payload, secret, clock.now()))).status).toBe(200);
    expect((await orderOf(orderId)).status).toBe('pending');
    expect(await creditsOf(orderId)).toEqual([]);
    // An event about an unknown session is acknowledged and ignored.
    const other = event('evt_unknown', 'cs_bi_unknown');
    expect((await webhook(other, signPayload(other, secret, clock.now()))).status).toBe(200);
  });
});
