import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { eq, sql } from 'drizzle-orm';
import { orders } from '../src/db/schema/index';
import { startTestServer, type TestServer } from './harness';
import { makeUser, rechargeBody, type TestUser } from './commerce-fixtures';

/**
 * The Stripe provider against a local fake of the Stripe API, reached through the SDK's injectable HTTP client:
 * the real SDK builds and sends every request, nothing leaves the machine.
 */
const WEBHOOK_SECRET = 'whsec_offline_test_secret';
const SECRET_KEY = 'sk_test_offline';

interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  form: URLSearchParams;
}
const seen: SeenRequest[] = [];
const sessions = new Map<string, Record<string, unknown>>();
let failCreate = false;
let fake: Server;
let s: TestServer;
let user: TestUser;
let other: TestUser;

function fakeStripe(): Promise<Server> {
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = new URL(req.url ?? '/', 'http://fake');
    seen.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, form: new URLSearchParams(body) });
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${seen.length}` });
      res.end(JSON.stringify(json));
    };
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      if (failCreate) return send(400, { error: { type: 'invalid_request_error', message: 'Currency not supported' } });
      const id = `cs_test_${sessions.size + 1}`;
      const session = { id, object: 'checkout.session', status: 'open', payment_status: 'unpaid', url: `https://checkout.stripe.com/c/pay/${id}`, payment_intent: null };
      sessions.set(id, session);
      return send(200, session);
    }
    const m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && m && sessions.has(m[1]!)) return send(200, sessions.get(m[1]!));
    return send(404, { error: { type: 'invalid_request_error', message: 'No such resource' } });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Stripe's fetch client, pointed at the fake (host, port and protocol rewritten; path, headers, body untouched). */
function clientFor(server: Server): Stripe.HttpClient {
  const inner = Stripe.createFetchHttpClient();
  const port = String((server.address() as AddressInfo).port);
  return {
    getClientName: () => 'offline-fake',
    makeRequest: (_host, _port, path, method, headers, data, _protocol, timeout) =>
      inner.makeRequest('127.0.0.1', port, path, method, headers, data, 'http', timeout),
  };
}

const stripe = new Stripe('sk_test_unused');
const signed = (payload: string, timestamp?: number) =>
  stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, ...(timestamp ? { timestamp } : {}) });
const webhook = async (payload: string, signature: string) => {
  const res = await fetch(`${s.base}/v1/payments/webhook/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    body: payload,
  });
  return { status: res.status, body: await res.json() };
};
const event = (id: string, type: string, sessionId: string, orderId: string) =>
  JSON.stringify({ id, object: 'event', type, created: Math.floor(Date.now() / 1000), data: { object: { id: sessionId, object: 'checkout.session', metadata: { orderId } } } });
const creditsOf = async (orderId: string) =>
  (await s.database.db.execute(sql`select minutes from ledger_entries where order_id = ${orderId}`)).rows.map((r) => Number((r as { minutes: number }).minutes));
const orderOf = async (id: string) => (await s.database.db.select().from(orders).where(eq(orders.id, id)))[0]!;

beforeAll(async () => {
  fake = await fakeStripe();
  s = await startTestServer({
    env: { PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET },
    overrides: { stripeHttpClient: clientFor(fake) },
  });
  [user, other] = await Promise.all([makeUser(s), makeUser(s)]);
});
afterAll(async () => {
  await s?.close();
  await new Promise((r) => fake?.close(r));
});

async function checkout(packId: string) {
  const res = await s.call('POST', '/v1/user/wallet/recharge', { token: user.token, body: rechargeBody(s, packId) });
  expect(res.status).toBe(200);
  const sessionId = res.body.url.split('/').pop() as string;
  const [o] = await s.database.db.select().from(orders).where(eq(orders.providerSessionId, sessionId));
  return { url: res.body.url as string, sessionId, orderId: o!.id };
}
function pay(sessionId: string) {
  const pm = { id: 'pm_1', object: 'payment_method', card: { brand: 'visa', last4: '4242' } };
  Object.assign(sessions.get(sessionId)!, {
    status: 'complete',
    payment_status: 'paid',
    payment_intent: { id: 'pi_1', object: 'payment_intent', status: 'succeeded', payment_method: pm },
  });
}

describe('stripe provider (offline)', () => {
  it('creates a Checkout Session with the server-computed amount, currency and order metadata', async () => {
    const { url, sessionId, orderId } = await checkout('de-unreal-25h');
    expect(url).toBe(`https://checkout.stripe.com/c/pay/${sessionId}`);
    const req = seen.find((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions')!;
    expect(req.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(req.headers['idempotency-key']).toBe(`checkout-${orderId}`);
    const f = req.form;
    expect(f.get('mode')).toBe('payment');
    expect(f.get('line_items[0][price_data][currency]')).toBe('eur');
    expect(f.get('line_items[0][price_data][unit_amount]')).toBe('3999');
    expect(f.get('line_items[0][quantity]')).toBe('1');
    expect(f.get('line_items[0][price_data][product_data][name]')).toBe('25 hours · Unreal Engine · Germany');
    expect(f.get('metadata[orderId]')).toBe(orderId);
    expect(f.get('client_reference_id')).toBe(orderId);
    expect(f.get('customer_email')).toBe(user.email);
    expect(f.get('success_url')).toBe(`${s.config.publicUrl}/success?orderId=${orderId}`);
    expect(f.get('cancel_url')).toBe(`${s.config.publicUrl}/failed`);
    expect((await orderOf(orderId)).provider).toBe('stripe');
  });

  it('fulfils once on a verified checkout.session.completed, from the retrieved session', async () => {
    const { sessionId, orderId } = await checkout('uk-unreal-10h');
    // Delivered before the payment went through: the retrieved session is still open, so nothing happens.
    const early = event('evt_early', 'checkout.session.completed', sessionId, orderId);
    expect((await webhook(early, signed(early))).status).toBe(200);
    expect((await orderOf(orderId)).status).toBe('pending');

    pay(sessionId);
    const payload = event('evt_paid_1', 'checkout.session.completed', sessionId, orderId);
    const first = await webhook(payload, signed(payload));
    expect(first).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(await orderOf(orderId)).toMatchObject({ status: 'paid', paymentMethod: 'Visa •••• 4242' });
    expect(await creditsOf(orderId)).toEqual([600]);
    const retrieve = seen.filter((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${sessionId}`);
    expect(retrieve.length).toBeGreaterThanOrEqual(2);

    // Replays and concurrent duplicates change nothing.
    const again = await Promise.all(Array.from({ length: 5 }, () => webhook(payload, signed(payload))));
    expect(again.every((r) => r.status === 200 && r.body.duplicate === true)).toBe(true);
    const another = event('evt_paid_2', 'checkout.session.async_payment_succeeded', sessionId, orderId);
    expect((await webhook(another, signed(another))).body.duplicate).toBe(false);
    expect(await creditsOf(orderId)).toEqual([600]);

    const status = await s.call('POST', '/v1/user/order/status', { token: user.token, body: { orderId } });
    expect(status.body).toEqual({ status: 'paid', pack: { region: 'UK', price: 14.99, paymentMethod: 'Visa •••• 4242', hours: 10 } });
    expect((await s.call('POST', '/v1/user/order/status', { token: other.token, body: { orderId } })).status).toBe(404);
  });

  it('refuses bad, tampered, missing and too-old signatures', async () => {
    const { sessionId, orderId } = await checkout('uk-unreal-10h');
    pay(sessionId);
    const payload = event('evt_sig', 'checkout.session.completed', sessionId, orderId);
    const forged = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload, secret: 'whsec_someone_else' });
    expect((await webhook(payload, forged)).status).toBe(400);
    expect((await webhook(payload.replace('evt_sig', 'evt_sig2'), signed(payload))).status).toBe(400);
    expect((await webhook(payload, 't=1,v1=00')).status).toBe(400);
    const tooOld = await webhook(payload, signed(payload, Math.floor(Date.now() / 1000) - 301));
    expect(tooOld.status).toBe(400);
    expect(tooOld.body.message).toBe('Webhook timestamp is outside the tolerance.');
    expect(await creditsOf(orderId)).toEqual([]);
    expect((await webhook(payload, signed(payload, Math.floor(Date.now() / 1000) - 120))).status).toBe(200);
    expect(await creditsOf(orderId)).toEqual([600]);
  });

  it('marks expired sessions expired and lets /order/status pull a paid one without a webhook', async () => {
    const a = await checkout('in-unreal-10h');
    Object.assign(sessions.get(a.sessionId)!, { status: 'expired' });
    const payload = event('evt_exp', 'checkout.session.expired', a.sessionId, a.orderId);
    expect((await webhook(payload, signed(payload))).status).toBe(200);
    expect((await orderOf(a.orderId)).status).toBe('expired');

    const b = await checkout('in-unreal-50h');
    pay(b.sessionId);
    const status = await s.call('POST', '/v1/user/order/status', { token: user.token, body: { orderId: b.orderId } });
    expect(status.body).toMatchObject({ status: 'paid', pack: { region: 'IN', price: 5299, hours: 50 } });
    expect(await creditsOf(b.orderId)).toEqual([3000]);
  });

  it('answers 502 and fails the order when Stripe refuses the session', async () => {
    failCreate = true;
    try {
      const res = await s.call('POST', '/v1/user/wallet/recharge', { token: user.token, body: rechargeBody(s, 'uk-unreal-50h') });
      expect(res.status).toBe(502);
      expect(res.body.message).toBe('The payment service is not reachable right now. Please try again.');
      const rows = await s.database.db.select().from(orders).where(eq(orders.userId, user.id));
      expect(rows.filter((o) => o.hours === 50 && o.region === 'UK').map((o) => o.status)).toEqual(['failed']);
    } finally {
      failCreate = false;
    }
  });
});
