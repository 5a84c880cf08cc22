import { z } from 'zod';
import { CountryId, MAX_STUDENTS, MIN_STUDENTS, PlatformName, SlotStatus } from './common';

/** Spec §3 business order payload; StartAt/ExpiresAt are epoch milliseconds. */
export const PackCostBody = z.object({
  Platform: PlatformName,
  VMs: z.number().int().min(MIN_STUDENTS).max(MAX_STUDENTS),
  StartAt: z.number().int().nonnegative(),
  ExpiresAt: z.number().int().nonnegative(),
  Region: CountryId,
});
/** Map of hours to price (major units), e.g. { "10": 120 }. */
export const PackCostAnswer = z.object({ prices: z.record(z.string(), z.number()) });

export const PackRechargeBody = PackCostBody.extend({
  TotalHours: z.number().int().positive().max(10000),
  Price: z.number().nonnegative(),
  success_url: z.string().url().max(2000),
  cancel_url: z.string().url().max(2000),
});

export const PackIdBody = z.object({ packId: z.string().max(100), terminate: z.boolean().optional() });
export const PackStartAnswer = z.object({ status: SlotStatus });

export const RosterSummary = z.object({
  added: z.number().int(),
  removed: z.number().int(),
  total: z.number().int(),
  /** Invitation e-mails queued by this upload. */
  invited: z.number().int(),
  /** What was limited (already invited today, the daily invitation limit), as sentences to show. */
  notices: z.array(z.string()),
  invalid: z.array(z.object({ line: z.number().int(), value: z.string() })),
});
export type RosterSummary = z.infer<typeof RosterSummary>;
