import { queryOptions } from '@tanstack/react-query';
import { CheckoutAnswer, type CountryId, PackCostAnswer, PackStartAnswer, type PlatformName, RosterAnswer, RosterInviteAnswer, RosterRemoveAnswer, RosterSummary, SeatEndAnswer, type SlotStatus } from '@hyperdesk/contract';
import { request } from './http';

/** What a course costs depends on (spec §3 business order payload without runtime and price). */
export interface CourseQuoteParams {
  Platform: PlatformName;
  VMs: number;
  /** Epoch milliseconds. */
  StartAt: number;
  ExpiresAt: number;
  Region: CountryId;
}

export interface CoursePriceOption {
  hours: number;
  /** Major units of the country's currency, for all VMs machines together. */
  price: number;
}

/**
 * Prices of a course by runtime hours per machine (spec §7 POST /pack/cost), sorted by hours. The server prices
 * every order itself; the checkout sends the chosen price back and the server refuses one that differs.
 */
export const packCostQuery = (p: CourseQuoteParams) =>
  queryOptions({
    queryKey: ['pack', 'cost', p.Region, p.Platform, p.VMs, p.StartAt, p.ExpiresAt],
    queryFn: async (): Promise<CoursePriceOption[]> => {
      const { prices } = await request('POST', '/v1/pack/cost', { body: p, schema: PackCostAnswer });
      return Object.entries(prices)
        .map(([hours, price]) => ({ hours: Number(hours), price }))
        .filter((o) => Number.isInteger(o.hours) && o.hours > 0)
        .sort((a, b) => a.hours - b.hours);
    },
    retry: false,
  });

/** Business checkout (spec §7 POST /pack/recharge): answers the hosted checkout URL. */
export function rechargePack(order: CourseQuoteParams & { TotalHours: number; Price: number }): Promise<{ url: string }> {
  const origin = window.location.origin;
  return request('POST', '/v1/pack/recharge', {
    body: { ...order, success_url: `${origin}/success`, cancel_url: `${origin}/failed` },
    schema: CheckoutAnswer,
  });
}

/** Start All: every machine of the course (refused before the course's start date). */
export async function startPack(packId: string): Promise<SlotStatus> {
  return (await request('POST', '/v1/pack/start', { body: { packId }, schema: PackStartAnswer })).status;
}

/** Stop All: every machine of the course; students' open sessions end. */
export async function stopPack(packId: string): Promise<SlotStatus> {
  return (await request('POST', '/v1/pack/stop', { body: { packId, terminate: true }, schema: PackStartAnswer })).status;
}

/** Replaces the course's student list with the e-mail addresses of a .csv or .txt file (spec §7 POST /pack/emails). */
export function uploadRoster(packId: string, file: File): Promise<RosterSummary> {
  const form = new FormData();
  form.append('packId', packId);
  form.append('attachment', file, file.name);
  return request('POST', '/v1/pack/emails', { form, schema: RosterSummary });
}

/** A course's student list, each address with its state and seat (issue 22). */
export const rosterKey = (packId: string) => ['pack', 'roster', packId] as const;

/**
 * The list of one course. `seatsKey` names who sits where in the balance the dashboard holds: when that changes (the
 * balance is pushed and polled), so does this key, and the list is read again with the new seats.
 */
export const rosterQuery = (packId: string, seatsKey: string) =>
  queryOptions({
    queryKey: [...rosterKey(packId), seatsKey],
    queryFn: () => request('GET', `/v1/pack/roster?packId=${encodeURIComponent(packId)}`, { schema: RosterAnswer }),
  });

/** Adds one address to the list and invites it (the answer's notices say when no invitation went out). */
export function addToRoster(packId: string, email: string): Promise<RosterInviteAnswer> {
  return request('POST', '/v1/pack/roster/add', { body: { packId, email }, schema: RosterInviteAnswer });
}

/** Removes one address from the list; its student loses their machine at once. */
export function removeFromRoster(packId: string, email: string): Promise<{ email: string }> {
  return request('POST', '/v1/pack/roster/remove', { body: { packId, email }, schema: RosterRemoveAnswer });
}

/** Sends the invitation of one listed address again (once a day per address, within the daily limit). */
export function resendInvitation(packId: string, email: string): Promise<RosterInviteAnswer> {
  return request('POST', '/v1/pack/roster/resend', { body: { packId, email }, schema: RosterInviteAnswer });
}

/** Ends the session of the student at one of the course's machines: their seat is freed and their tab told why. */
export function endSeatSession(packId: string, machineId: string): Promise<{ ended: true }> {
  return request('POST', '/v1/pack/seat/end', { body: { packId, machineId }, schema: SeatEndAnswer });
}
