import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { eq } from 'drizzle-orm';
import type Stripe from 'stripe';
import type { Config } from '../../config';
import type { Db } from '../../db/client';
import { orders } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import { getOrCreateSecret } from '../../lib/secrets';
import { BadRequest, HttpError } from '../../errors';
import type { Ledger } from '../ledger/service';
import { createFulfilment, type Fulfilment, type OrderRow } from './fulfilment';
import { createWebhookOutbox, type WebhookOutbox } from './outbox';
import { createBuiltinProvider, type BuiltinProvider } from './providers/builtin';
import { createStripeProvider } from './providers/stripe';
import type { PaymentProvider } from './providers/types';
import { singleFulfiller } from './single';

/** An order to charge; the caller has priced it (from the catalog or the course pricing), never the browser. */
export interface NewOrder {
  userId: string;
  email: string;
  kind: OrderRow['kind'];
  packId?: string | null;
  courseId?: string | null;
  region: string;
  platform: string;
  hours: number;
  vms?: number;
  startAt?: Date | null;
  expiresAt?: Date | null;
  amountMinor: number;
  currency: string;
  description: string;
  successUrl: string;
  cancelUrl: string;
}

/** ctx.billing: the payment provider registry (house rule 7) and the order lifecycle around it. */
export interface Billing {
  /** The provider new checkouts use (PAYMENT_PROVIDER). */
  active: PaymentProvider;
  /** Any configured provider by kind (webhooks and old orders name theirs). */
  provider(kind: string): PaymentProvider | undefined;
  /** Always present: its hosted page is served by this server. */
  builtin: BuiltinProvider;
  outbox: WebhookOutbox;
  fulfilment: Fulfilment;
  /** Throws BadRequest unless both return URLs are on PUBLIC_URL's origin (no open redirect through checkout). */
  assertReturnUrls(successUrl: string, cancelUrl: string): void;
  /** Records the order, opens the provider's checkout session and answers its URL. The success URL gets ?orderId=. */
  startCheckout(o: NewOrder): Promise<{ orderId: string; url: string }>;
  jobs: Job[];
}

export interface BillingOverrides {
  /** Stripe's HTTP client (tests point the real SDK at a local fake API). */
  stripeHttpClient?: Stripe.HttpClient;
}

export async function createBilling(deps: {
  db: Db;
  clock: Clock;
  config: Config;
  log: FastifyBaseLogger;
  ledger: Ledger;
  overrides?: BillingOverrides;
}): Promise<Billing> {
  const { db, clock, config, log } = deps;
  const secret = await getOrCreateSecret(db, 'builtin-payments-webhook');
  let builtin: BuiltinProvider | null = null;
  const outbox = createWebhookOutbox({ db, clock, log, sign: (_kind, payload, now) => builtin!.sign(payload, now) });
  builtin = createBuiltinProvider({ db, clock, publicUrl: config.publicUrl, secret, outbox });
  const providers = new Map<string, PaymentProvider>([['builtin', builtin]]);
  if (config.STRIPE_SECRET_KEY && config.STRIPE_WEBHOOK_SECRET) {
    providers.set(
      'stripe',
      createStripeProvider({
        secretKey: config.STRIPE_SECRET_KEY,
        webhookSecret: config.STRIPE_WEBHOOK_SECRET,
        clock,
        httpClient: deps.overrides?.stripeHttpClient,
      }),
    );
  }
  const active = providers.get(config.PAYMENT_PROVIDER);
  if (!active) throw new Error(`payment provider ${config.PAYMENT_PROVIDER} is not configured`);
  const provider = (kind: string) => providers.get(kind);
  const fulfilment = createFulfilment({ db, clock, log, provider });
  fulfilment.addFulfiller('single', singleFulfiller(deps.ledger));
  const site = new URL(config.publicUrl).origin;
  const b = builtin;

  return {
    active,
    provider,
    builtin: b,
    outbox,
    fulfilment,

    assertReturnUrls(successUrl, cancelUrl) {
      for (const u of [successUrl, cancelUrl]) {
        let origin: string;
        try {
          origin = new URL(u).origin;
        } catch {
          origin = '';
        }
        if (origin !== site) throw new BadRequest(`Return addresses must be on ${site}.`, 'billing/return-url');
      }
    },

    async startCheckout(o) {
      const orderId = randomUUID();
      const success = new URL(o.successUrl);
      success.searchParams.set('orderId', orderId);
      await db.insert(orders).values({
        id: orderId,
        userId: o.userId,
        kind: o.kind,
        packId: o.packId ?? null,
        courseId: o.courseId ?? null,
        region: o.region,
        platform: o.platform,
        hours: o.hours,
        vms: o.vms ?? 1,
        startAt: o.startAt ?? null,
        expiresAt: o.expiresAt ?? null,
        amountMinor: o.amountMinor,
        currency: o.currency,
        provider: active.kind,
        successUrl: success.toString(),
        cancelUrl: o.cancelUrl,
        createdAt: clock.now(),
      });
      let session: { sessionId: string; url: string };
      try {
        // Outside any transaction: for Stripe this is an HTTP call (house rule 5).
        session = await active.createCheckout(db, {
          orderId,
          amountMinor: o.amountMinor,
          currency: o.currency,
          description: o.description,
          customerEmail: o.email,
          successUrl: success.toString(),
          cancelUrl: o.cancelUrl,
        });
      } catch (err) {
        log.error({ err, orderId }, 'could not open a checkout session');
        await db.update(orders).set({ status: 'failed' }).where(eq(orders.id, orderId));
        throw new HttpError(502, 'The payment service is not reachable right now. Please try again.', 'billing/provider-unavailable');
      }
      await db.update(orders).set({ providerSessionId: session.sessionId, checkoutUrl: session.url }).where(eq(orders.id, orderId));
      return { orderId, url: session.url };
    },

    jobs: [
      outbox.job,
      { name: 'builtin-checkout-expiry', intervalMs: 60_000, runOnce: async () => void (await b.expireDue()) },
    ],
  };
}
