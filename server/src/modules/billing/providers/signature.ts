import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { BadRequest } from '../../../errors';
import { WEBHOOK_TOLERANCE_SECONDS, type VerifiedEvent } from './types';

/**
 * Stripe's webhook signature scheme, used by both providers: header `stripe-signature: t=<unix>,v1=<hex>` where
 * hex = HMAC-SHA256(secret, `${t}.${rawBody}`). Verification is Stripe's own code, so the built-in provider's
 * events pass exactly the checks a Stripe event does.
 */
export function signPayload(payload: string, secret: string, now: Date): string {
  const t = Math.floor(now.getTime() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

export function verifyPayload(raw: Buffer, header: string | undefined, secret: string, now: Date): VerifiedEvent {
  if (!header) throw new BadRequest('Missing webhook signature.', 'webhook/no-signature');
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(raw, header, secret, WEBHOOK_TOLERANCE_SECONDS, undefined, now.getTime());
  } catch (err) {
    const tooOld = /tolerance/i.test((err as Error).message);
    throw new BadRequest(
      tooOld ? 'Webhook timestamp is outside the tolerance.' : 'Invalid webhook signature.',
      tooOld ? 'webhook/too-old' : 'webhook/bad-signature',
    );
  }
  if (typeof event?.id !== 'string' || typeof event.type !== 'string') throw new BadRequest('Malformed webhook event.', 'webhook/malformed');
  const object = (event.data?.object ?? {}) as { id?: unknown; metadata?: { orderId?: unknown } | null };
  const isSession = event.type.startsWith('checkout.session.');
  const sessionId = isSession && typeof object.id === 'string' ? object.id : null;
  const orderId = isSession && typeof object.metadata?.orderId === 'string' ? object.metadata.orderId : null;
  return { id: event.id, type: event.type, sessionId, orderId };
}
