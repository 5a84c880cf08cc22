import type { FastifyBaseLogger } from 'fastify';
import { and, eq, isNull } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client';
import { orders, webhookEvents } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import { NotFound } from '../../errors';
import type { PaymentProvider, SessionTruth } from './providers/types';

export type OrderRow = typeof orders.$inferSelect;

/** Gives a paid order what it bought, inside the fulfilment transaction; must be idempotent per order. */
export type Fulfiller = (tx: Tx, order: OrderRow, paidAt: Date) => Promise<{ machineId?: string | null }>;

export interface Fulfilment {
  /** House rule 6: verify the signature on the raw body, skip an event id already processed, then converge the
   *  order from the provider's current truth. Safe to run any number of times, concurrently, in any order. */
  handleWebhook(kind: string, raw: Buffer, signature: string | undefined): Promise<{ duplicate: boolean }>;
  /** Pulls the provider's truth for an unfinished order and converges it (the /success page must not depend on
   *  the webhook's speed). Answers the order as it is now. */
  converge(order: OrderRow): Promise<OrderRow>;
  /** Registers what a paid order of `kind` delivers ('single' is built in; courses add theirs). */
  addFulfiller(kind: OrderRow['kind'], f: Fulfiller): void;
  /** Called after commit whenever an order changed status (paid, failed, expired), e.g. to push a balance event. */
  onSettled(listener: (order: { id: string; userId: string; status: OrderRow['status'] }) => void): void;
}

export function createFulfilment(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  provider: (kind: string) => PaymentProvider | undefined;
}): Fulfilment {
  const { db, clock } = deps;
  const fulfillers = new Map<string, Fulfiller>();
  const listeners: ((order: { id: string; userId: string; status: OrderRow['status'] }) => void)[] = [];
  const settled = (o: OrderRow | null) => {
    if (!o) return;
    for (const fn of listeners) {
      try {
        fn({ id: o.id, userId: o.userId, status: o.status });
      } catch (err) {
        deps.log.warn({ err, orderId: o.id }, 'order listener failed');
      }
    }
  };

  /** One transaction: the order row is locked, so concurrent convergences of one order run one after another and
   *  the second finds fulfilled_at set. The ledger key order:<id> is the last line of defence. */
  const apply = async (tx: Tx, orderId: string, truth: SessionTruth, sessionId: string | null): Promise<OrderRow | null> => {
    const [o] = await tx.select().from(orders).where(eq(orders.id, orderId)).for('update');
    if (!o) return null;
    const patch: Partial<OrderRow> = {};
    if (!o.providerSessionId && sessionId) patch.providerSessionId = sessionId;
    if (truth.status === 'paid' && !o.fulfilledAt) {
      const fulfil = fulfillers.get(o.kind);
      if (!fulfil) throw new Error(`no fulfiller for ${o.kind} orders`);
      const paidAt = truth.paidAt ?? clock.now();
      const { machineId } = await fulfil(tx, o, paidAt);
      Object.assign(patch, {
        status: 'paid',
        paidAt,
        paymentMethod: truth.paymentMethod ?? o.paymentMethod ?? 'Card',
        machineId: machineId ?? o.machineId,
        fulfilledAt: clock.now(),
      });
    } else if (o.status === 'pending' && (truth.status === 'failed' || truth.status === 'expired')) {
      Object.assign(patch, { status: truth.status, paymentMethod: truth.paymentMethod ?? null });
    }
    if (Object.keys(patch).length) await tx.update(orders).set(patch).where(eq(orders.id, o.id));
    return patch.status ? { ...o, ...patch } : null;
  };

  /** The order an event concerns: by session id, else (session id never saved) by the order id in its metadata. */
  const orderOf = async (kind: string, sessionId: string, orderId: string | null) => {
    const [bySession] = await db.select().from(orders).where(and(eq(orders.provider, kind), eq(orders.providerSessionId, sessionId)));
    if (bySession) return bySession;
    if (!orderId || !/^[0-9a-f-]{36}$/i.test(orderId)) return null;
    const [byId] = await db
      .select()
      .from(orders)
      .where(and(eq(orders.id, orderId), eq(orders.provider, kind), isNull(orders.providerSessionId)));
    return byId ?? null;
  };

  return {
    async handleWebhook(kind, raw, signature) {
      const provider = deps.provider(kind);
      if (!provider) throw new NotFound('Unknown payment provider.');
      const event = provider.verifyWebhook(raw, signature, clock.now());
      const [seen] = await db.select({ id: webhookEvents.eventId }).from(webhookEvents).where(eq(webhookEvents.eventId, event.id));
      if (seen) return { duplicate: true };
      const order = event.sessionId ? await orderOf(kind, event.sessionId, event.orderId) : null;
      // The provider's truth is read outside the transaction (it may be an HTTP call); apply() only moves forward.
      const truth = order && !order.fulfilledAt ? await provider.truth(event.sessionId!) : null;
      let changed: OrderRow | null = null;
      const recorded = await db.transaction(async (tx) => {
        if (order && truth) changed = await apply(tx, order.id, truth, event.sessionId);
        const ins = await tx
          .insert(webhookEvents)
          .values({ eventId: event.id, provider: kind, type: event.type.slice(0, 100), receivedAt: clock.now() })
          .onConflictDoNothing()
          .returning({ id: webhookEvents.eventId });
        return ins.length > 0;
      });
      settled(changed);
      return { duplicate: !recorded };
    },

    async converge(order) {
      if (order.fulfilledAt || !order.providerSessionId) return order;
      const provider = deps.provider(order.provider);
      if (!provider) return order;
      try {
        const truth = await provider.truth(order.providerSessionId);
        settled(await db.transaction((tx) => apply(tx, order.id, truth, null)));
      } catch (err) {
        deps.log.warn({ err, orderId: order.id }, 'could not read the payment provider; the order stays as it is');
        return order;
      }
      const [now] = await db.select().from(orders).where(eq(orders.id, order.id));
      return now ?? order;
    },

    addFulfiller(kind, f) {
      fulfillers.set(kind, f);
    },
    onSettled(listener) {
      listeners.push(listener);
    },
  };
}
