import { z } from 'zod';

export const ContactAnswer = z.object({ success: z.boolean(), message: z.string() });
export const CONTACT_FIELD_MAX = { name: 100, email: 254, Query: 5000 } as const;
