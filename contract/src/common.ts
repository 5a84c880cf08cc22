import { z } from 'zod';

/** Roles of a wallet balance entry (spec §6, design §5). */
export const Role = z.enum(['SINGLE', 'INSTRUCTOR', 'STUDENT']);
export type Role = z.infer<typeof Role>;

/** Observed state of a machine as the dashboard shows it (spec §4). */
export const InstanceStatus = z.enum(['offline', 'processing', 'online']);
export type InstanceStatus = z.infer<typeof InstanceStatus>;

/** Answer status of the slot and pack start/stop calls (spec §4). */
export const SlotStatus = z.enum(['WAIT', 'RUNNING', 'FAILED', 'STOPPED']);
export type SlotStatus = z.infer<typeof SlotStatus>;

export const CountryId = z.enum(['DE', 'IN', 'ES', 'UK']);
export type CountryId = z.infer<typeof CountryId>;

export interface Country {
  id: CountryId;
  label: string;
  flag: string;
  currency: 'EUR' | 'INR' | 'GBP';
  symbol: string;
}

/** Spec §9: countries and their currency symbols. */
export const COUNTRIES: readonly Country[] = [
  { id: 'DE', label: 'Germany', flag: '🇩🇪', currency: 'EUR', symbol: '€' },
  { id: 'IN', label: 'India', flag: '🇮🇳', currency: 'INR', symbol: '₹' },
  { id: 'ES', label: 'Spain', flag: '🇪🇸', currency: 'EUR', symbol: '€' },
  { id: 'UK', label: 'United Kingdom', flag: '🇬🇧', currency: 'GBP', symbol: '£' },
];

export function countryById(id: string): Country | undefined {
  return COUNTRIES.find((c) => c.id === id);
}

export const PlatformName = z.enum(['Unreal Engine', 'Unity Engine']);
export type PlatformName = z.infer<typeof PlatformName>;

export interface PlatformOption {
  name: PlatformName;
  cpu: string;
  cpu_cores: number;
  ram: string;
  gpu: string;
  gpu_ram: string;
  disabled: boolean;
}

/** Spec §3: platform options (Unity is shown but only business users may pick it). */
export const PLATFORMS: readonly PlatformOption[] = [
  { name: 'Unreal Engine', cpu: 'Intel Xeon E5-2670', cpu_cores: 4, ram: '16 GB', gpu: 'Nvidia T4', gpu_ram: '16 GB', disabled: false },
  { name: 'Unity Engine', cpu: 'Intel Xeon E5-2670', cpu_cores: 4, ram: '16 GB', gpu: 'Nvidia T4', gpu_ram: '16 GB', disabled: true },
];

/** Spec §3: the static configuration instructors see instead of per-entry values. */
export const INSTRUCTOR_STATIC_CONFIG = {
  platform: 'Unreal Engine',
  cpu: 'Intel Xeon-class CPU',
  cores: 4,
  ram: '16 GB',
  gpu: 'Nvidia T4-class GPU',
  gpu_ram: '16 GB',
} as const;

export const MIN_STUDENTS = 1;
export const MAX_STUDENTS = 40;
export const MIN_PASSWORD = 6;

/** Bounded strings: every input is limited (house rule 4). */
export const Email = z.string().trim().toLowerCase().max(254);
export const Uuid = z.string().uuid();

/** The one error body every failure answers with (house rule 3). */
export const ErrorBody = z.object({
  statusCode: z.number(),
  error: z.string(),
  message: z.string(),
  code: z.string().optional(),
  reqId: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const Ok = z.object({ ok: z.literal(true) });
