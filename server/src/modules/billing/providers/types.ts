import type { Queryable } from '../../../db/client';

/** What a provider needs to open a hosted checkout for one order (amount in minor units, decided by the server). */
export interface CheckoutRequest {
  orderId: string;
  amountMinor: number;
  currency: string;
  /** One line for the payment page, e.g. "10 hours · Unreal Engine · United Kingdom". */
  description: string;
  customerEmail: string;
  /** Where the browser lands after paying; already carries ?orderId=. */
  successUrl: string;
  cancelUrl: string;
}

/** The provider's current truth about a checkout session, which fulfilment converges the order to. */
export interface SessionTruth {
  status: 'open' | 'paid' | 'failed' | 'expired';
  /** Shown on /success, e.g. "Visa •••• 4242". */
  paymentMethod?: string | null;
  /** When the payment succeeded, if the provider says. */
  paidAt?: Date | null;
}

/** A verified webhook delivery: its event id (the dedup key) and the checkout session it concerns, if any. */
export interface VerifiedEvent {
  id: string;
  type: string;
  sessionId: string | null;
  /** The order named in the session's metadata (used when the order never got its session id: a crash between
   *  creating the session and saving its id). */
  orderId: string | null;
}

/** A payment provider behind the one interface (house rule 7); the registry picks one by PAYMENT_PROVIDER. */
export interface PaymentProvider {
  kind: 'builtin' | 'stripe';
  /** Opens a checkout session; `q` is where the order lives (the builtin provider keeps its sessions there). */
  createCheckout(q: Queryable, req: CheckoutRequest): Promise<{ sessionId: string; url: string }>;
  /** Verifies the signature on the raw body (tolerance 300 s against `now`); throws BadRequest when it fails. */
  verifyWebhook(raw: Buffer, signature: string | undefined, now: Date): VerifiedEvent;
  /** Reads the session's current state from the provider. */
  truth(sessionId: string): Promise<SessionTruth>;
}

/** Stripe's signature tolerance, used for both providers. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
