import { PLATFORMS, type BalanceEntry, type CountryId, type MachineConfig, type PlatformName } from '@hyperdesk/contract';
import type { Queryable } from '../../db/client';
import type { Principal } from '../identity/tokens';
import { singleMachinesWithHours } from '../machines/queries';

/** Builds some of a user's balance entries; the balance is the concatenation of every builder's entries. */
export type BalanceBuilder = (q: Queryable, principal: Principal, at: Date) => Promise<BalanceEntry[]>;

/** Minutes to hours with 2 decimals (the contract's unit for timeLeft and totalHours). */
export function minutesToHours(minutes: number): number {
  return Math.round((minutes / 60) * 100) / 100;
}

/** Spec §3 machine config of a platform (cores = the platform's cpu_cores). */
export function machineConfigOf(platform: string): MachineConfig {
  const p = PLATFORMS.find((x) => x.name === platform) ?? PLATFORMS[0]!;
  return { platform: p.name, cpu: p.cpu, cores: p.cpu_cores, ram: p.ram, gpu: p.gpu, gpu_ram: p.gpu_ram };
}

export const connectUrl = (packId: string) => `/v1/slot/connect?packId=${encodeURIComponent(packId)}`;

/** One SINGLE entry per machine the user bought (design §5): hours from the ledger's lot remainders, state from the
 *  reconciler — one query through the machines module, whatever the minutes used. */
export function singleEntries(): BalanceBuilder {
  return async (q, principal, at) =>
    (await singleMachinesWithHours(q, principal.uid, at)).map((m): BalanceEntry => ({
      role: 'SINGLE',
      platform: m.platform as PlatformName,
      packId: m.id,
      machineName: m.name,
      timeLeft: minutesToHours(m.leftMinutes),
      totalHours: minutesToHours(m.totalMinutes),
      vms: 1,
      instanceStatus: m.observed,
      url: connectUrl(m.id),
      startDate: null,
      endDate: null,
      machineConfig: machineConfigOf(m.platform),
      region: m.region as CountryId,
      stopReason: m.stopReason,
      processingSince: m.processingSince ? m.processingSince.toISOString() : null,
    }));
}

/** A user's whole balance from a list of builders (SINGLE machines, course entries); one query per builder, in parallel. */
export async function buildBalance(q: Queryable, principal: Principal, at: Date, builders: readonly BalanceBuilder[]): Promise<BalanceEntry[]> {
  const parts = await Promise.all(builders.map((b) => b(q, principal, at)));
  return parts.flat();
}
