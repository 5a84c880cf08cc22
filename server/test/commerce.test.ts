import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { NO_PACKAGES_MESSAGE } from '@hyperdesk/contract';
import { machines, orders, packs } from '../src/db/schema/index';
import { manualClock } from '../src/lib/clock';
import { startTestServer, type TestServer } from './harness';
import { makeUser, pathOf, rechargeBody, submitCard, type TestUser } from './commerce-fixtures';

const clock = manualClock(new Date());
let s: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  s = await startTestServer({ clock });
  [alice, bob] = await Promise.all([makeUser(s), makeUser(s)]);
});
afterAll(async () => s.close());

const credits = async (orderId: string) =>
  (await s.database.db.execute(sql`select minutes, idempotency_key from ledger_entries where order_id = ${orderId}`)).rows as { minutes: number; idempotency_key: string }[];

/** Buys a pack through the real flow: recharge → hosted page → card; answers the order id and the redirect. */
async function buy(user: TestUser, packId: string, number = '4242424242424242') {
  const res = await s.call('POST', '/v1/user/wallet/recharge', { token: user.token, body: rechargeBody(s, packId) });
  expect(res.status).toBe(200);
  const paid = await submitCard(s.base, pathOf(res.body.url), { number });
  expect(paid.status).toBe(303);
  const orderId = new URL(paid.location!).searchParams.get('orderId') ?? (await latestOrderOf(user.id));
  return { orderId, location: paid.location!, url: res.body.url as string };
}
async function latestOrderOf(userId: string): Promise<string> {
  const rows = await s.database.db.select().from(orders).where(eq(orders.userId, userId));
  return rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0]!.id;
}

describe('catalog', () => {
  it('lists every pack with its price in major units, for the id token only', async () => {
    expect((await s.call('POST', '/v1/packs', { body: {} })).status).toBe(401);
    const res = await s.call('POST', '/v1/packs', { token: alice.token, body: { idtoken: 'ignored' } });
    expect(res.status).toBe(200);
    expect(res.body.packs).toHaveLength(32);
    expect(res.body.packs).toContainEqual({ packId: 'uk-unreal-10h', region: 'UK', hours: 10, price: 14.99, platform: 'Unreal Engine' });
    expect(res.body.packs).toContainEqual({ packId: 'in-unreal-100h', region: 'IN', hours: 100, price: 9999, platform: 'Unreal Engine' });
    expect(Object.keys(res.body.packs[0]).sort()).toEqual(['hours', 'packId', 'platform', 'price', 'region']);
    expect((await s.call('POST', '/v1/packs', { token: alice.token })).status).toBe(200);
    expect((await s.call('POST', '/v1/packs', { token: alice.token, raw: '{bad' })).status).toBe(400);
  });

  it('answers the packs of one location, or the not-available message', async () => {
    const res = await s.call('GET', '/v1/packs/location?region=UK&platform=Unreal%20Engine', { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.body.packs.map((p: { hours: number }) => p.hours)).toEqual([10, 25, 50, 100]);
    expect(res.body.packs.every((p: { region: string; platform: string }) => p.region === 'UK' && p.platform === 'Unreal Engine')).toBe(true);
    expect((await s.call('GET', '/v1/packs/location?region=FR&platform=Unreal%20Engine', { token: alice.token })).status).toBe(400);
    expect((await s.call('GET', '/v1/packs/location?region=UK', { token: alice.token })).status).toBe(400);
    expect((await s.call('GET', '/v1/packs/location?region=UK&platform=Unreal%20Engine')).status).toBe(401);

    await s.database.db.update(packs).set({ active: false }).where(sql`region = 'ES' and platform = 'Unity Engine'`);
    const none = await s.call('GET', '/v1/packs/location?region=ES&platform=Unity%20Engine', { token: alice.token });
    expect(none.status).toBe(404);
    expect(none.body.message).toBe(NO_PACKAGES_MESSAGE);
  });
});

describe('recharge', () => {
  it('refuses bad input, unknown packs, foreign return URLs and disabled platforms', async () => {
    const post = (body: unknown, token = alice.token) => s.call('POST', '/v1/user/wallet/recharge', { token, body });
    expect((await s.call('POST', '/v1/user/wallet/recharge', { body: rechargeBody(s, 'uk-unreal-10h') })).status).toBe(401);
    expect((await post({ success_url: `${s.config.publicUrl}/success`, cancel_url: `${s.config.publicUrl}/failed` })).status).toBe(400);
    expect((await post(rechargeBody(s, 'uk-unreal-10h', { success_url: 'not a url' }))).status).toBe(400);
    expect((await post(rechargeBody(s, 'x'.repeat(101)))).status).toBe(400);
    expect((await post(rechargeBody(s, 'no-such-pack'))).status).toBe(404);
    expect((await post(rechargeBody(s, 'es-unity-10h'))).status).toBe(404); // deactivated above
    for (const bad of ['https://evil.example/success', 'javascript:alert(1)', `${s.config.publicUrl}.evil.example/x`]) {
      const a = await post(rechargeBody(s, 'uk-unreal-10h', { success_url: bad }));
      expect(a.status).toBe(400);
      expect((await post(rechargeBody(s, 'uk-unreal-10h', { cancel_url: bad }))).status).toBe(400);
    }
    const unity = await post(rechargeBody(s, 'uk-unity-10h'));
    expect(unity.status).toBe(403);
    expect(unity.body.message).toBe('Please select the platform');
    const teacher = await makeUser(s, { instructor: true });
    expect((await post(rechargeBody(s, 'uk-unity-10h'), teacher.token)).status).toBe(200);
  });

  it('prices the order from the pack and ignores a client-sent price or hours', async () => {
    const res = await s.call('POST', '/v1/user/wallet/recharge', {
      token: alice.token,
      body: rechargeBody(s, 'in-unreal-25h', { price: 0.01, Price: 1, hours: 1000, amount: 1, currency: 'USD', region: 'UK' }),
    });
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(new RegExp(`^${s.config.publicUrl}/checkout/cs_bi_[A-Za-z0-9_-]+$`));
    const [o] = await s.database.db.select().from(orders).where(eq(orders.checkoutUrl, res.body.url));
    expect(o).toMatchObject({ amountMinor: 279900, currency: 'INR', hours: 25, region: 'IN', platform: 'Unreal Engine', status: 'pending', kind: 'single' });
    expect(o!.successUrl).toBe(`${s.config.publicUrl}/success?orderId=${o!.id}`);
    const status = await s.call('POST', '/v1/user/order/status', { token: alice.token, body: { orderId: o!.id } });
    expect(status.body).toEqual({ status: 'pending', pack: { region: 'IN', price: 2799, paymentMethod: '', hours: 25 } });
  });
});

describe('order status', () => {
  it('answers the owner only; others, unknown and malformed ids get 404', async () => {
    const { orderId } = await buy(alice, 'uk-unreal-10h');
    const mine = await s.call('POST', '/v1/user/order/status', { token: alice.token, body: { orderId } });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({ status: 'paid', pack: { region: 'UK', price: 14.99, paymentMethod: 'Visa •••• 4242', hours: 10 } });
    expect((await s.call('POST', '/v1/user/order/status', { token: bob.token, body: { orderId } })).status).toBe(404);
    expect((await s.call('POST', '/v1/user/order/status', { token: alice.token, body: { orderId: randomUUID() } })).status).toBe(404);
    expect((await s.call('POST', '/v1/user/order/status', { token: alice.token, body: { orderId: "1' or '1'='1" } })).status).toBe(404);
    expect((await s.call('POST', '/v1/user/order/status', { token: alice.token, body: {} })).status).toBe(400);
    expect((await s.call('POST', '/v1/user/order/status', { body: { orderId } })).status).toBe(401);
  });

  it('converges a pending order from the provider when the webhook has not arrived', async () => {
    // No webhook can be delivered: the provider's truth changes, the order does not (yet).
    s.app.ctx.billing.outbox.setTarget(() => null);
    const { orderId } = await buy(bob, 'de-unreal-10h');
    const [before] = await s.database.db.select().from(orders).where(eq(orders.id, orderId));
    expect(before!.status).toBe('pending');
    const status = await s.call('POST', '/v1/user/order/status', { token: bob.token, body: { orderId } });
    expect(status.body.status).toBe('paid');
    expect(await credits(orderId)).toEqual([{ minutes: 600, idempotency_key: `order:${orderId}` }]);
    // The late webhook (the outbox job delivers it once the endpoint is back) changes nothing further.
    s.app.ctx.billing.outbox.setTarget((kind) => `${s.base}/v1/payments/webhook/${kind}`);
    clock.advance(10 * 60_000);
    await s.app.ctx.billing.outbox.job.runOnce();
    expect((await s.database.db.execute(sql`select count(*)::int as n from payment_webhook_outbox where delivered_at is null`)).rows[0]).toEqual({ n: 0 });
    expect(await credits(orderId)).toHaveLength(1);
  });
});

describe('wallet balance', () => {
  it('shows one SINGLE entry per machine, topped up by later packs, and only the caller’s', async () => {
    const carol = await makeUser(s);
    expect((await s.call('GET', '/v1/user/wallet/balance')).status).toBe(401);
    expect((await s.call('GET', '/v1/user/wallet/balance', { token: carol.token })).body).toEqual({ balance: [] });

    await buy(carol, 'uk-unreal-10h');
    await buy(carol, 'uk-unreal-25h');
    await buy(carol, 'de-unreal-50h');
    const res = await s.call('GET', '/v1/user/wallet/balance', { token: carol.token });
    expect(res.status).toBe(200);
    expect(res.body.balance).toHaveLength(2);
    const uk = res.body.balance.find((e: { region: string }) => e.region === 'UK');
    const [m] = await s.database.db.select().from(machines).where(eq(machines.id, uk.packId));
    expect(m!.ownerUserId).toBe(carol.id);
    expect(uk).toEqual({
      role: 'SINGLE',
      platform: 'Unreal Engine',
      packId: m!.id,
      machineName: m!.name,
      timeLeft: 35,
      totalHours: 35,
      vms: 1,
      instanceStatus: 'offline',
      url: `/v1/slot/connect?packId=${m!.id}`,
      startDate: null,
      endDate: null,
      machineConfig: { platform: 'Unreal Engine', cpu: 'Intel Xeon E5-2670', cores: 4, ram: '16 GB', gpu: 'Nvidia T4', gpu_ram: '16 GB' },
      region: 'UK',
      stopReason: null,
      processingSince: null,
    });
    expect(m!.name).toMatch(/^UE-UK-[A-Z0-9]{4}$/);

    const since = new Date(clock.now().getTime() - 60_000);
    await s.database.db.update(machines).set({ observed: 'processing', processingSince: since }).where(eq(machines.id, m!.id));
    const busy = (await s.call('GET', '/v1/user/wallet/balance', { token: carol.token })).body.balance;
    expect(busy.find((e: { packId: string }) => e.packId === m!.id)).toMatchObject({ instanceStatus: 'processing', processingSince: since.toISOString() });

    const others = (await s.call('GET', '/v1/user/wallet/balance', { token: bob.token })).body.balance;
    expect(others.some((e: { packId: string }) => e.packId === m!.id)).toBe(false);
  });

  it('writes off hours one month after the purchase', async () => {
    const dan = await makeUser(s);
    await buy(dan, 'es-unreal-10h');
    const at = clock.now();
    clock.set(new Date(at.getTime() + 32 * 24 * 3_600_000));
    const jobs = s.app.ctx.jobs.filter((j) => j.name === 'ledger-expiry');
    expect(jobs).toHaveLength(1);
    await jobs[0]!.runOnce();
    const [entry] = (await s.call('GET', '/v1/user/wallet/balance', { token: (await s.app.ctx.tokens.sign({ uid: dan.id, email: dan.email, name: 'D', instructor: false, admin: false, emailVerified: false })) })).body.balance;
    expect(entry).toMatchObject({ timeLeft: 0, totalHours: 0 });
    const sum = (await s.database.db.execute(sql`select sum(minutes)::int as n from ledger_entries where machine_id = ${entry.packId}`)).rows[0];
    expect(sum).toEqual({ n: 0 });
    clock.set(at);
  });
});
