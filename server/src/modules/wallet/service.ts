import { PLATFORMS, type BalanceEntry, type CountryId, type MachineConfig, type PlatformName } from '@hyperdesk/contract';
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client';
import type { Principal } from '../identity/tokens';
import { readSingleMachines, singleMachinesWithHoursJson, type SingleMachineHours } from '../machines/queries';

/**
 * Builds some of a user's balance entries; the balance is the concatenation of every builder's entries. For each
 * read a builder gives a scalar select of its rows as one JSON value, so the wallet reads every builder in ONE
 * statement, and how that read's JSON becomes entries.
 */
export interface BalanceBuilder {
  read(principal: Principal, at: Date): BalanceRead;
}
export interface BalanceRead {
  select: SQL;
  entries(json: unknown): BalanceEntry[];
}

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
  return {
    read: (principal, at) => ({
      select: singleMachinesWithHoursJson(principal.uid, at),
      entries: (json) => readSingleMachines(json).map(singleEntry),
    }),
  };
}

function singleEntry(m: SingleMachineHours): BalanceEntry {
  return {
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
  };
}

let readers = 0;

/**
 * A user's whole balance from a fixed list of builders (SINGLE machines, course entries): ONE prepared statement,
 * one round trip, whatever the machines, courses or minutes used. Each reader has its own statement name.
 */
export function balanceReader(database: Pick<Database, 'prepared'>, builders: readonly BalanceBuilder[]) {
  const name = `wallet_balance_${++readers}`;
  return async (principal: Principal, at: Date): Promise<BalanceEntry[]> => {
    const reads = builders.map((b) => b.read(principal, at));
    const parts = reads.map((r, i) => sql`(${r.select}) as ${sql.raw(`p${i}`)}`);
    const [row] = await database.prepared(name, sql`select ${sql.join(parts, sql`, `)}`);
    if (!row) throw new Error('balance: no row');
    return reads.flatMap((r, i) => r.entries(parseJson(row[`p${i}`])));
  };
}

/** node-postgres and PGlite parse json columns; a driver that hands back text is parsed here. */
function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}
