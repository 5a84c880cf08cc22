import { z } from 'zod';
import { SlotStatus } from './common';

export const SlotBody = z.object({ packId: z.string().max(100), terminate: z.boolean().optional() });
export const SlotAnswer = z.object({ status: SlotStatus, url: z.string(), reason: z.string().optional() });
export type SlotAnswer = z.infer<typeof SlotAnswer>;

/** Reset machine: the desktop back to the image; the home stays unless eraseHome. A course's instructor may reset its seats. */
export const MachineResetBody = z.object({ packId: z.string().max(100), eraseHome: z.boolean().optional() }).strict();
export const MachineResetAnswer = z.object({ status: z.literal('RESETTING') });
export type MachineResetAnswer = z.infer<typeof MachineResetAnswer>;

/** Connect (design §5): the tab exchanges the entry's url for a short-lived single-use ticket. */
export const TicketBody = z.object({ url: z.string().max(2000) });
export const TicketAnswer = z.object({ ticket: z.string(), wsPath: z.string(), expiresIn: z.number() });
