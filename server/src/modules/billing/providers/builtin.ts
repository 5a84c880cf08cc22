import { randomBytes } from 'node:crypto';
import { and, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../../db/client';
import { builtinCheckoutSessions, type BuiltinSessionStatus } from '../../../db/schema/index';
import type { Clock } from '../../../lib/clock';
import type { WebhookOutbox } from '../outbox';
import { checkCard, outcomeOf, paymentMethodLabel, type CardInput } from './cards';
import { signPayload, verifyPayload } from './signature';
import type { PaymentProvider, SessionTruth } from './types';

export type BuiltinSession = typeof builtinCheckoutSessions.$inferSelect;

/** What the hosted page does after a form post. */
export type PageResult =
  | { kind: 'redirect'; to: string }
  | { kind: 'form'; session: BuiltinSession; error?: string; values?: Partial<CardInput> }
  | { kind: 'expired'; session: BuiltinSession }
  | { kind: 'missing' };

export interface BuiltinProvider extends PaymentProvider {
  kind: 'builtin';
  session(id: string): Promise<BuiltinSession | null>;
  /** The page's Pay button. A declined card ends on cancel_url; the session stays payable until it expires, so
   *  'Retry Payment' (which returns to the checkout URL) can pay it with another card. */
  pay(id: string, card: CardInput): Promise<PageResult>;
  cancel(id: string): Promise<PageResult>;
  /** Expires open sessions past their expiry (emitting checkout.session.expired); answers how many. */
  expireDue(): Promise<number>;
  /** Signs a payload with this provider's webhook secret (used by the outbox at send time). */
  sign(payload: string, now: Date): string;
}

/** Like a Stripe Checkout Session, a session is payable for 24 hours. */
export const SESSION_TTL_MS = 24 * 60 * 60_000;
const PAYABLE: BuiltinSessionStatus[] = ['open', 'declined', 'cancelled'];
const EVENT_TYPE: Record<Exclude<BuiltinSessionStatus, 'open'>, string> = {
  paid: 'checkout.session.completed',
  declined: 'checkout.session.payment_failed',
  cancelled: 'checkout.session.canceled',
  expired: 'checkout.session.expired',
};

export function createBuiltinProvider(deps: { db: Db; clock: Clock; publicUrl: string; secret: string; outbox: WebhookOutbox }): BuiltinProvider {
  const { db, clock, outbox } = deps;

  const session = async (id: string) => {
    if (id.length > 100) return null;
    const [row] = await db.select().from(builtinCheckoutSessions).where(eq(builtinCheckoutSessions.id, id));
    return row ?? null;
  };

  /** Records the event of a state change in the same transaction (so it exists iff the change committed). */
  const emit = async (q: Queryable, s: { id: string; orderId: string; status: BuiltinSessionStatus; events: number }) => {
    if (s.status === 'open') return null;
    const eventId = `evt_${s.id}_${s.events}`;
    const payload = JSON.stringify({
      id: eventId,
      object: 'event',
      type: EVENT_TYPE[s.status],
      created: Math.floor(clock.now().getTime() / 1000),
      livemode: false,
      data: { object: { id: s.id, object: 'checkout.session', status: s.status, client_reference_id: s.orderId, metadata: { orderId: s.orderId } } },
    });
    await outbox.enqueue(q, { provider: 'builtin', eventId, payload });
    return eventId;
  };

  /** Moves a session from a payable state to `to`; null when it was no longer payable (a concurrent post won). */
  const transition = async (id: string, to: BuiltinSessionStatus, from: BuiltinSessionStatus[], card?: { brand: string; last4: string }) => {
    const now = clock.now();
    const eventId = await db.transaction(async (tx) => {
      const [row] = await tx
        .update(builtinCheckoutSessions)
        .set({
          status: to,
          events: sql`${builtinCheckoutSessions.events} + 1`,
          completedAt: to === 'paid' || to === 'declined' ? now : undefined,
          cardBrand: card?.brand,
          cardLast4: card?.last4,
        })
        .where(and(eq(builtinCheckoutSessions.id, id), inArray(builtinCheckoutSessions.status, from)))
        .returning();
      return row ? emit(tx, row) : null;
    });
    if (eventId) await outbox.deliver([eventId]).catch(() => 0); // the outbox job retries whatever is not acknowledged
    return eventId;
  };

  const expireIfDue = async (s: BuiltinSession) => {
    if (s.status !== 'open' || s.expiresAt.getTime() > clock.now().getTime()) return s;
    await transition(s.id, 'expired', ['open']);
    return (await session(s.id)) ?? s;
  };

  const closedResult = (s: BuiltinSession): PageResult => {
    if (s.status === 'paid') return { kind: 'redirect', to: s.successUrl };
    if (s.status === 'expired' || s.expiresAt.getTime() <= clock.now().getTime()) return { kind: 'expired', session: s };
    return { kind: 'form', session: s };
  };

  return {
    kind: 'builtin',
    session,

    async createCheckout(q, req) {
      const id = `cs_bi_${randomBytes(18).toString('base64url')}`;
      await q.insert(builtinCheckoutSessions).values({
        id,
        orderId: req.orderId,
        amountMinor: req.amountMinor,
        currency: req.currency,
        description: req.description,
        successUrl: req.successUrl,
        cancelUrl: req.cancelUrl,
        expiresAt: new Date(clock.now().getTime() + SESSION_TTL_MS),
      });
      return { sessionId: id, url: `${deps.publicUrl}/checkout/${id}` };
    },

    verifyWebhook: (raw, signature, now) => verifyPayload(raw, signature, deps.secret, now),
    sign: (payload, now) => signPayload(payload, deps.secret, now),

    async truth(sessionId): Promise<SessionTruth> {
      const s = await session(sessionId);
      if (!s) return { status: 'open' };
      const paymentMethod = paymentMethodLabel(s.cardBrand, s.cardLast4);
      switch (s.status) {
        case 'paid':
          return { status: 'paid', paymentMethod, paidAt: s.completedAt };
        case 'declined':
        case 'cancelled':
          return { status: 'failed', paymentMethod };
        case 'expired':
          return { status: 'expired' };
        default:
          return { status: 'open' };
      }
    },

    async pay(id, card) {
      let s = await session(id);
      if (!s) return { kind: 'missing' };
      s = await expireIfDue(s);
      if (!PAYABLE.includes(s.status)) return closedResult(s);
      const values = { number: card.number, exp: card.exp, name: card.name };
      const checked = checkCard(card, clock.now());
      if ('error' in checked) return { kind: 'form', session: s, error: checked.error, values };
      const outcome = outcomeOf(checked.number);
      if (!outcome) {
        return {
          kind: 'form',
          session: s,
          values,
          error: 'Your card was declined. This is a test checkout: use the test card 4242 4242 4242 4242.',
        };
      }
      const to = outcome.kind === 'paid' ? 'paid' : 'declined';
      const moved = await transition(id, to, PAYABLE, { brand: checked.brand, last4: checked.last4 });
      if (!moved) return closedResult((await session(id)) ?? s);
      return { kind: 'redirect', to: to === 'paid' ? s.successUrl : s.cancelUrl };
    },

    async cancel(id) {
      const s = await session(id);
      if (!s) return { kind: 'missing' };
      if (s.status === 'paid') return { kind: 'redirect', to: s.successUrl };
      await transition(id, 'cancelled', ['open']);
      return { kind: 'redirect', to: s.cancelUrl };
    },

    async expireDue() {
      const due = await db
        .select({ id: builtinCheckoutSessions.id })
        .from(builtinCheckoutSessions)
        .where(and(eq(builtinCheckoutSessions.status, 'open'), lte(builtinCheckoutSessions.expiresAt, clock.now())))
        .limit(200);
      let n = 0;
      for (const { id } of due) if (await transition(id, 'expired', ['open'])) n++;
      return n;
    },
  };
}
