import { countryById } from '@hyperdesk/contract';

/**
 * Course dates (spec §9 `DD Mon 'YY`): one formatter for the web, the server's checkout and its e-mails, always in the
 * course's country's time zone (contract/src/dates.ts), so a date reads the same on every page and in every mail.
 */
export { formatCourseDate as formatDate, formatCourseDates as formatDateRange } from '@hyperdesk/contract';

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
