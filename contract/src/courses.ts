import { z } from 'zod';
import { CountryId, Email, MAX_STUDENTS, MIN_STUDENTS, PlatformName, SlotStatus } from './common';

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

/**
 * The roster one address at a time (issue 22): who is on a course's list and how far each got. `invited`: on the list,
 * no verified account with the address yet; `verified`: an account proved the address; `joined`: that student has
 * used a machine of the course; `connected`: they hold a seat now (`seat` names the machine).
 */
export const RosterStudentState = z.enum(['invited', 'verified', 'joined', 'connected']);
export type RosterStudentState = z.infer<typeof RosterStudentState>;

export const RosterStudent = z.object({
  email: z.string(),
  state: RosterStudentState,
  /** An account exists with this address (verified or not). */
  signedUp: z.boolean(),
  /** The machine the student sits at now, else null. */
  seat: z.string().nullable(),
  /** When the last invitation e-mail to this address for this course went out (ISO), null if none was sent. */
  invitedAt: z.string().nullable(),
  addedAt: z.string(),
});
export type RosterStudent = z.infer<typeof RosterStudent>;

export const RosterQuery = z.object({ packId: z.string().max(100) });
export const RosterAnswer = z.object({
  students: z.array(RosterStudent),
  /** How many addresses the list may hold (10 per machine, at most 400). */
  max: z.number().int(),
});
export type RosterAnswer = z.infer<typeof RosterAnswer>;

/** Add, remove or re-invite one address of a course's list. */
export const RosterEmailBody = z.object({ packId: z.string().max(100), email: Email });
export const RosterInviteAnswer = z.object({
  email: z.string(),
  /** An invitation e-mail was queued. */
  invited: z.boolean(),
  /** Why no invitation went out (already invited today, the daily limit), as sentences to show. */
  notices: z.array(z.string()),
});
export type RosterInviteAnswer = z.infer<typeof RosterInviteAnswer>;
export const RosterRemoveAnswer = z.object({ email: z.string(), removed: z.literal(true) });

/** An instructor ends the session of the student sitting at one machine of the course (issue 22.3). */
export const SeatEndBody = z.object({ packId: z.string().max(100), machineId: z.string().max(100) }).strict();
export const SeatEndAnswer = z.object({ ended: z.literal(true) });
export type SeatEndAnswer = z.infer<typeof SeatEndAnswer>;
