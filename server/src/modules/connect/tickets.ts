import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, lt, or, isNotNull } from 'drizzle-orm';
import type { Queryable } from '../../db/client';
import { connectTickets } from '../../db/schema/index';

/** Browsers cannot set headers on a WebSocket, so the tab trades its id token for one of these first. */
export const TICKET_TTL_SECONDS = 30;
const TICKET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

/** Issues a random single-use ticket bound to the user and the machine; only its hash is stored. */
export async function issueTicket(
  q: Queryable,
  e: { userId: string; machineId: string; now: Date },
): Promise<{ ticket: string; expiresIn: number }> {
  const ticket = randomBytes(32).toString('base64url');
  await q.insert(connectTickets).values({
    ticketHash: hashOf(ticket),
    userId: e.userId,
    machineId: e.machineId,
    expiresAt: new Date(e.now.getTime() + TICKET_TTL_SECONDS * 1000),
  });
  return { ticket, expiresIn: TICKET_TTL_SECONDS };
}

/**
 * Uses a ticket up, atomically: of two concurrent attempts only one gets the grant. Unknown, malformed, expired and
 * used tickets all answer null.
 */
export async function consumeTicket(
  q: Queryable,
  ticket: unknown,
  now: Date,
): Promise<{ userId: string; machineId: string } | null> {
  if (typeof ticket !== 'string' || !TICKET_SHAPE.test(ticket)) return null;
  const rows = await q
    .update(connectTickets)
    .set({ usedAt: now })
    .where(and(eq(connectTickets.ticketHash, hashOf(ticket)), isNull(connectTickets.usedAt), gt(connectTickets.expiresAt, now)))
    .returning({ userId: connectTickets.userId, machineId: connectTickets.machineId });
  return rows[0] ?? null;
}

/** Deletes tickets that can no longer be used (kept an hour for the operators' curiosity). */
export async function sweepTickets(q: Queryable, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - 60 * 60 * 1000);
  await q
    .delete(connectTickets)
    .where(or(lt(connectTickets.expiresAt, cutoff), and(isNotNull(connectTickets.usedAt), lt(connectTickets.usedAt, cutoff))));
}
