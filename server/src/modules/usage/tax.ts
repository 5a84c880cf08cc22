import type { CountryId } from '@hyperdesk/contract';

/**
 * The consumer tax included in our prices, by the country a machine runs in (issue 22.4 receipts): the standard
 * rate of each country's VAT or GST as of 2026. Prices are shown and charged tax included, so a receipt names the
 * tax inside the total: total × rate / (1 + rate).
 */
export const CONSUMER_TAX: Readonly<Record<CountryId, { label: string; rate: number }>> = {
  DE: { label: 'VAT (MwSt.)', rate: 0.19 },
  ES: { label: 'VAT (IVA)', rate: 0.21 },
  UK: { label: 'VAT', rate: 0.2 },
  IN: { label: 'GST', rate: 0.18 },
};

/** The tax included in a tax-inclusive amount in minor units, rounded to the minor unit. */
export function includedTaxMinor(totalMinor: number, rate: number): number {
  return Math.round((totalMinor * rate) / (1 + rate));
}
