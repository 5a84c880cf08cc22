import { z } from 'zod';

/** An alert the hours raised (issue 22.4), still true now: shown as a banner on the machine's card. */
export const HoursAlert = z.object({
  kind: z.enum(['low-20', 'low-1h', 'expiry-3d']),
  /** The banner's words, e.g. "Only 1 hour left on Unreal Engine · Germany." */
  text: z.string(),
});
export type HoursAlert = z.infer<typeof HoursAlert>;

/**
 * GET /v1/user/hours/notices: per machine (single user) or course (its instructor) the user controls; students get
 * none. `runOutAt` (ISO): when the hours left run out at the pace of the last 7 days of use (or since the first use
 * when shorter); null when unused lately or when the hours expire first.
 */
export const HoursNotice = z.object({
  packId: z.string(),
  runOutAt: z.string().nullable(),
  alert: HoursAlert.nullable(),
});
export type HoursNotice = z.infer<typeof HoursNotice>;
export const HoursNoticesAnswer = z.object({ notices: z.array(HoursNotice) });
export type HoursNoticesAnswer = z.infer<typeof HoursNoticesAnswer>;
