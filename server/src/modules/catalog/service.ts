import { and, asc, eq } from 'drizzle-orm';
import type { CountryId, Pack, PlatformName } from '@hyperdesk/contract';
import type { Db } from '../../db/client';
import { packs } from '../../db/schema/index';

export type PackRow = typeof packs.$inferSelect;

/** Packs for sale, read from the database so operators can change prices (the server alone prices an order). */
export interface Catalog {
  /** Every active pack, grouped by region then platform, smallest first. */
  list(): Promise<PackRow[]>;
  forLocation(region: CountryId, platform: PlatformName): Promise<PackRow[]>;
  /** An active pack by id, or null. */
  get(packId: string): Promise<PackRow | null>;
}

/** Minor units to the major-unit number the contract answers with (EUR, GBP and INR all have 2 decimals). */
export function toMajor(minor: number): number {
  return Math.round(minor) / 100;
}

/** A row as the contract's Pack (price in major units). */
export function toPack(row: PackRow): Pack {
  return {
    packId: row.packId,
    region: row.region as CountryId,
    hours: row.hours,
    price: toMajor(row.priceMinor),
    platform: row.platform as PlatformName,
  };
}

export function createCatalog(db: Db): Catalog {
  const order = [asc(packs.region), asc(packs.platform), asc(packs.sort), asc(packs.hours)];
  return {
    list: () => db.select().from(packs).where(eq(packs.active, true)).orderBy(...order),
    forLocation: (region, platform) =>
      db
        .select()
        .from(packs)
        .where(and(eq(packs.active, true), eq(packs.region, region), eq(packs.platform, platform)))
        .orderBy(...order),
    async get(packId) {
      const [row] = await db.select().from(packs).where(and(eq(packs.packId, packId), eq(packs.active, true)));
      return row ?? null;
    },
  };
}
