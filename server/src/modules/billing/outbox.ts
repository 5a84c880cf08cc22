import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { and, asc, eq, inArray, isNull, lte, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client';
import { paymentWebhookOutbox } from '../../db/schema/index';
import type { Clock } from '../../lib/clock';
import type { Job } from '../../lib/jobs';
import { webhookDeliveries, webhookRetries } from '../metrics/metrics';

/** A delivery is claimed for this long, so the job does not send a row an in-flight request is sending. */
const CLAIM_MS = 60_000;
const MAX_BACKOFF_MS = 60 * 60_000;
const BATCH = 50;

/**
 * Webhook events of an in-process provider (the built-in checkout), delivered the way Stripe delivers its own:
 * recorded in the transaction that changes the provider's truth, POSTed after commit, signed at send time (so a
 * late retry is still within the receiver's tolerance), and retried with backoff until a 2xx answer. A crash at any
 * point loses nothing; a repeated delivery is deduplicated by the receiver.
 */
export interface WebhookOutbox {
  enqueue(q: Queryable, e: { provider: string; eventId: string; payload: string }): Promise<void>;
  /** Delivers the named events now (or every due event); answers how many were acknowledged. */
  deliver(eventIds?: string[]): Promise<number>;
  /** Where events go: the server's own webhook endpoint (set once it listens). */
  setTarget(target: (provider: string) => string | null): void;
  job: Job;
}

export function createWebhookOutbox(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  sign: (provider: string, payload: string, now: Date) => string;
}): WebhookOutbox {
  const { db, clock, log } = deps;
  let target: (provider: string) => string | null = () => null;

  const send = async (row: typeof paymentWebhookOutbox.$inferSelect): Promise<boolean> => {
    const url = target(row.provider);
    if (!url) return false;
    const now = clock.now();
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': deps.sign(row.provider, row.payload, now) },
        body: row.payload,
        signal: AbortSignal.timeout(15_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        webhookDeliveries.inc({ provider: row.provider, outcome: 'delivered' });
        await db.update(paymentWebhookOutbox).set({ deliveredAt: clock.now(), lastError: null }).where(eq(paymentWebhookOutbox.id, row.id));
        return true;
      }
      await failed(row, `HTTP ${res.status}`);
    } catch (err) {
      await failed(row, (err as Error).message);
    }
    return false;
  };

  const failed = async (row: typeof paymentWebhookOutbox.$inferSelect, error: string) => {
    const attempts = row.attempts + 1;
    webhookDeliveries.inc({ provider: row.provider, outcome: 'failed' });
    webhookRetries.inc({ provider: row.provider });
    const backoff = Math.min(MAX_BACKOFF_MS, 5_000 * 2 ** Math.min(attempts, 12));
    log.warn({ eventId: row.eventId, attempts, error }, 'webhook delivery failed; will retry');
    await db
      .update(paymentWebhookOutbox)
      .set({ attempts, lastError: error.slice(0, 500), nextAttemptAt: new Date(clock.now().getTime() + backoff) })
      .where(and(eq(paymentWebhookOutbox.id, row.id), isNull(paymentWebhookOutbox.deliveredAt)));
  };

  const deliver = async (eventIds?: string[]) => {
    if (eventIds && eventIds.length === 0) return 0;
    const now = clock.now();
    // Claim due rows atomically: concurrent deliverers (this request, the job, other servers) skip each other's rows.
    const claimed = await db
      .update(paymentWebhookOutbox)
      .set({ nextAttemptAt: new Date(now.getTime() + CLAIM_MS) })
      .where(
        and(
          isNull(paymentWebhookOutbox.deliveredAt),
          lte(paymentWebhookOutbox.nextAttemptAt, now),
          eventIds
            ? inArray(paymentWebhookOutbox.eventId, eventIds)
            : inArray(
                paymentWebhookOutbox.id,
                db
                  .select({ id: paymentWebhookOutbox.id })
                  .from(paymentWebhookOutbox)
                  .where(and(isNull(paymentWebhookOutbox.deliveredAt), lte(paymentWebhookOutbox.nextAttemptAt, now)))
                  .orderBy(asc(paymentWebhookOutbox.nextAttemptAt))
                  .limit(BATCH),
              ),
        ),
      )
      .returning();
    let ok = 0;
    for (const row of claimed) if (await send(row)) ok++;
    return ok;
  };

  return {
    async enqueue(q, e) {
      await q
        .insert(paymentWebhookOutbox)
        .values({ id: randomUUID(), provider: e.provider, eventId: e.eventId, payload: e.payload, nextAttemptAt: clock.now() })
        .onConflictDoNothing();
    },
    deliver,
    setTarget(t) {
      target = t;
    },
    job: {
      name: 'payment-webhook-outbox',
      intervalMs: 5_000,
      runOnce: async () => {
        while ((await deliver()) === BATCH) {
          /* keep draining while full batches succeed */
        }
      },
    },
  };
}

/** Pending deliveries (operators and tests read it). */
export async function pendingDeliveries(db: Db): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(paymentWebhookOutbox)
    .where(isNull(paymentWebhookOutbox.deliveredAt));
  return Number(row?.n ?? 0);
}
