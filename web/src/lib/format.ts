import { countryById } from '@hyperdesk/contract';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Spec §9 date format: `DD Mon 'YY` (e.g. 05 Mar '26), in the viewer's local time. */
export function formatDate(value: Date | string | number): string {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) return '';
  const day = String(d.getDate()).padStart(2, '0');
  const year = String(d.getFullYear() % 100).padStart(2, '0');
  return `${day} ${MONTHS[d.getMonth()]} '${year}`;
}

/** A course's date range, e.g. `05 Mar '26 - 20 Mar '26`. */
export function formatDateRange(start: Date | string | number, end: Date | string | number): string {
  return `${formatDate(start)} - ${formatDate(end)}`;
}

/** Amount in major units: whole numbers without decimals, others with two (4,999 / 49.50). */
export function formatAmount(amount: number): string {
  const whole = Number.isInteger(amount);
  return new Intl.NumberFormat('en-GB', {
    minimumFractionDigits: whole ? 0 : 2,
    maximumFractionDigits: whole ? 0 : 2,
  }).format(amount);
}

/** `{symbol} {amount}` as the pay button and summaries show it (spec §2), e.g. `€ 49.99`. */
export function formatMoney(amount: number, symbol: string): string {
  return `${symbol} ${formatAmount(amount)}`;
}

/** Money in the currency of a country id (DE, IN, ES, UK). */
export function formatMoneyIn(amount: number, countryId: string): string {
  return formatMoney(amount, countryById(countryId)?.symbol ?? '');
}

/** Hours with at most one decimal, rounded down so a balance is never overstated (24.98 → "24.9"). */
export function formatHours(hours: number): string {
  const tenths = Math.floor(Math.max(0, hours) * 10 + 1e-9) / 10;
  return Number.isInteger(tenths) ? String(tenths) : tenths.toFixed(1);
}
