import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { and, eq } from 'drizzle-orm';
import {
  CheckoutAnswer,
  countryById,
  ErrorBody,
  OrderStatusAnswer,
  OrderStatusBody,
  PLATFORMS,
  WalletRechargeBody,
  type CountryId,
} from '@hyperdesk/contract';
import type { Ctx } from '../../context';
import { principalOf } from '../../http/auth';
import { Forbidden, NotFound } from '../../errors';
import { orders } from '../../db/schema/index';
import { toMajor } from '../catalog/service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const WEBHOOK_BODY_LIMIT = 256 * 1024;
const WebhookParams = z.object({ provider: z.enum(['builtin', 'stripe']) });
const WebhookAnswer = z.object({ received: z.literal(true), duplicate: z.boolean() });

/** Individual checkout, order status and the payment webhooks (spec §7, design §5, house rules 5 and 6). */
export async function billingRoutes(app: FastifyInstance, ctx: Ctx): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/user/wallet/recharge',
    {
      preHandler: app.authenticate,
      schema: { body: WalletRechargeBody, response: { 200: CheckoutAnswer, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 502: ErrorBody } },
    },
    async (req) => {
      const me = principalOf(req);
      ctx.billing.assertReturnUrls(req.body.success_url, req.body.cancel_url);
      // Price, hours, country and platform come from the pack row: anything else in the body is ignored.
      const pack = await ctx.catalog.get(req.body.packId);
      if (!pack) throw new NotFound('This package is not available.', 'billing/unknown-pack');
      const platform = PLATFORMS.find((p) => p.name === pack.platform);
      if (!platform || (platform.disabled && !me.instructor)) throw new Forbidden('Please select the platform', 'billing/platform-disabled');
      const country = countryById(pack.region);
      const { url } = await ctx.billing.startCheckout({
        userId: me.uid,
        email: me.email,
        kind: 'single',
        packId: pack.packId,
        region: pack.region,
        platform: pack.platform,
        hours: pack.hours,
        amountMinor: pack.priceMinor,
        currency: pack.currency,
        description: `${pack.hours} hours · ${pack.platform} · ${country?.label ?? pack.region}`,
        successUrl: req.body.success_url,
        cancelUrl: req.body.cancel_url,
      });
      return { url };
    },
  );

  r.post(
    '/user/order/status',
    { preHandler: app.authenticate, schema: { body: OrderStatusBody, response: { 200: OrderStatusAnswer, 404: ErrorBody } } },
    async (req) => {
      const me = principalOf(req);
      const id = req.body.orderId;
      if (!UUID.test(id)) throw new NotFound('Order not found.', 'billing/order-not-found');
      const [found] = await ctx.db.select().from(orders).where(and(eq(orders.id, id), eq(orders.userId, me.uid)));
      if (!found) throw new NotFound('Order not found.', 'billing/order-not-found');
      // Pull the provider's truth when the webhook has not converged the order yet (house rule 6, pull side).
      const o = found.status === 'pending' || found.status === 'failed' ? await ctx.billing.fulfilment.converge(found) : found;
      return {
        status: o.status,
        pack: { region: o.region as CountryId, price: toMajor(o.amountMinor), paymentMethod: o.paymentMethod ?? '', hours: o.hours },
      };
    },
  );

  // Webhooks need the exact bytes that were signed: in this scope every body arrives as a raw Buffer.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/payments/webhook/:provider',
      { schema: { hide: true, params: WebhookParams, response: { 200: WebhookAnswer, 400: ErrorBody, 404: ErrorBody } } },
      async (req) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const header = req.headers['stripe-signature'];
        const signature = Array.isArray(header) ? header[0] : header;
        const { duplicate } = await ctx.billing.fulfilment.handleWebhook(req.params.provider, raw, signature);
        return { received: true as const, duplicate };
      },
    );
  });

  // A paid order adds hours to a machine: open dashboards re-fetch the balance.
  ctx.billing.fulfilment.onSettled((o) => ctx.events.publish([o.userId], { type: 'balance' }));

  // The built-in provider delivers its events to this server over loopback (PUBLIC_URL may be a proxy that is
  // not reachable from inside), through the same endpoint and checks as a Stripe delivery.
  ctx.billing.outbox.setTarget((kind) => {
    const a = app.server.address() as AddressInfo | string | null;
    if (!a || typeof a === 'string') return null;
    const wildcard = a.address === '0.0.0.0' || a.address === '::';
    const host = wildcard ? '127.0.0.1' : a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}/v1/payments/webhook/${kind}`;
  });
}
