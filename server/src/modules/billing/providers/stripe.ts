import Stripe from 'stripe';
import type { Clock } from '../../../lib/clock';
import { verifyPayload } from './signature';
import type { PaymentProvider, SessionTruth } from './types';

/**
 * Stripe Checkout (mode payment) in the order's currency for the server-computed amount. The HTTP client is
 * injectable (Stripe's HttpClient interface), so tests drive the real SDK against a local fake API offline.
 */
export function createStripeProvider(deps: { secretKey: string; webhookSecret: string; clock: Clock; httpClient?: Stripe.HttpClient }): PaymentProvider {
  const stripe = new Stripe(deps.secretKey, {
    httpClient: deps.httpClient ?? Stripe.createFetchHttpClient(),
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false,
  });

  return {
    kind: 'stripe',

    async createCheckout(_q, req) {
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: req.orderId,
          customer_email: req.customerEmail,
          metadata: { orderId: req.orderId },
          payment_intent_data: { metadata: { orderId: req.orderId } },
          line_items: [
            {
              quantity: 1,
              price_data: { currency: req.currency.toLowerCase(), unit_amount: req.amountMinor, product_data: { name: req.description } },
            },
          ],
          success_url: req.successUrl,
          cancel_url: req.cancelUrl,
        },
        // One session per order even when the call is retried after a network failure.
        { idempotencyKey: `checkout-${req.orderId}` },
      );
      if (!session.url) throw new Error(`Stripe returned no checkout URL for ${session.id}`);
      return { sessionId: session.id, url: session.url };
    },

    verifyWebhook: (raw, signature, now) => verifyPayload(raw, signature, deps.webhookSecret, now),

    async truth(sessionId): Promise<SessionTruth> {
      const s = await stripe.checkout.sessions.retrieve(sessionId, { expand: ['payment_intent.payment_method'] });
      const intent = typeof s.payment_intent === 'object' ? s.payment_intent : null;
      const pm = intent && typeof intent.payment_method === 'object' ? intent.payment_method : null;
      const paymentMethod = pm?.card ? `${brandName(pm.card.brand)} •••• ${pm.card.last4}` : pm ? 'Card' : null;
      if (s.payment_status === 'paid' || s.payment_status === 'no_payment_required') {
        return { status: 'paid', paymentMethod: paymentMethod ?? 'Card', paidAt: deps.clock.now() };
      }
      if (s.status === 'expired') return { status: 'expired' };
      // A completed session that is still unpaid is a delayed payment method: failed once its intent gave up.
      if (s.status === 'complete' && intent && (intent.status === 'requires_payment_method' || intent.status === 'canceled')) {
        return { status: 'failed', paymentMethod };
      }
      return { status: 'open' };
    },
  };
}

function brandName(brand: string): string {
  const names: Record<string, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover' };
  return names[brand] ?? brand.charAt(0).toUpperCase() + brand.slice(1);
}
