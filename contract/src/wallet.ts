import { z } from 'zod';
import { CountryId, InstanceStatus, PlatformName, Role } from './common';

export const MachineConfig = z.object({
  platform: z.string(),
  cpu: z.string(),
  cores: z.number(),
  ram: z.string(),
  gpu: z.string(),
  gpu_ram: z.string(),
});
export type MachineConfig = z.infer<typeof MachineConfig>;

/** A seat of a course: one of its machines and who holds it (instructor entries only). */
export const Seat = z.object({
  /** The machine's id: what Reset machine (`/user/slot/reset`) and End session (`/pack/seat/end`) take. */
  machineId: z.string(),
  machineName: z.string(),
  instanceStatus: InstanceStatus,
  student: z.string().nullable(),
});

/**
 * One wallet balance entry (spec §3). `timeLeft` and `totalHours` are in hours (may be fractional: minutes are
 * metered). `startDate`/`endDate` are ISO-8601 strings (null for single machines). `packId` names the machine of a
 * single user, or the course of an instructor or student; it is the id the slot and pack calls take.
 */
export const BalanceEntry = z.object({
  role: Role,
  platform: PlatformName,
  packId: z.string(),
  machineName: z.string(),
  timeLeft: z.number(),
  totalHours: z.number(),
  vms: z.number().int(),
  instanceStatus: InstanceStatus,
  url: z.string(),
  startDate: z.string().nullable(),
  endDate: z.string().nullable(),
  machineConfig: MachineConfig,
  region: CountryId,
  /** Why the machine last stopped on its own (hours ran out, idle, expiry, start failure), else null. */
  stopReason: z.string().nullable(),
  /** When the current start began (ISO), for the 5-minute countdown; null unless processing. */
  processingSince: z.string().nullable(),
  seats: z.array(Seat).optional(),
  rosterSize: z.number().int().optional(),
});
export type BalanceEntry = z.infer<typeof BalanceEntry>;
export const BalanceAnswer = z.object({ balance: z.array(BalanceEntry) });

/** Individual checkout (spec §7). success_url/cancel_url must be on this site's origin. */
export const WalletRechargeBody = z.object({
  packId: z.string().max(100),
  success_url: z.string().url().max(2000),
  cancel_url: z.string().url().max(2000),
});
export const CheckoutAnswer = z.object({ url: z.string() });

export const OrderStatusBody = z.object({ orderId: z.string().max(100) });
export const OrderStatusAnswer = z.object({
  status: z.enum(['pending', 'paid', 'failed', 'expired']),
  pack: z.object({
    region: CountryId,
    price: z.number(),
    paymentMethod: z.string(),
    hours: z.number(),
  }),
});
