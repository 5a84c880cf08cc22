/**
 * Card rules of the built-in test checkout. It is a test-mode provider: like Stripe in test mode it accepts only
 * the published test card numbers, and never real ones.
 */

export type CardOutcome = { kind: 'paid' } | { kind: 'declined'; message: string };

/** Stripe's test numbers: these succeed… */
const PAYS = new Set([
  '4242424242424242',
  '4000056655665556',
  '5555555555554444',
  '2223003122003222',
  '5200828282828210',
  '378282246310005',
  '6011111111111117',
]);
/** …and these are declined with the issuer's reason. */
const DECLINES: Record<string, string> = {
  '4000000000000002': 'Your card was declined.',
  '4000000000009995': 'Your card has insufficient funds.',
  '4000000000009987': 'Your card was declined.',
  '4000000000000069': 'Your card has expired.',
};

export interface CardInput {
  number: string;
  exp: string;
  cvc: string;
  name: string;
}

export interface CheckedCard {
  number: string;
  last4: string;
  brand: string;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function brandOf(digits: string): string {
  if (/^3[47]/.test(digits)) return 'American Express';
  if (/^4/.test(digits)) return 'Visa';
  if (/^(5[1-5]|2[2-7])/.test(digits)) return 'Mastercard';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'Discover';
  return 'Card';
}

/** Validates the form; answers the card or the message to show next to the form (Stripe's wording). */
export function checkCard(input: CardInput, now: Date): CheckedCard | { error: string } {
  const number = input.number.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) return { error: 'Your card number is invalid.' };
  const exp = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(input.exp);
  if (!exp) return { error: "Your card's expiration date is incomplete." };
  const month = Number(exp[1]);
  const year = exp[2]!.length === 2 ? 2000 + Number(exp[2]) : Number(exp[2]);
  if (month < 1 || month > 12) return { error: "Your card's expiration month is invalid." };
  // A card is valid through the last day of its expiry month.
  if (Date.UTC(year, month, 1) <= now.getTime()) return { error: "Your card's expiration date is in the past." };
  const brand = brandOf(number);
  const cvcDigits = brand === 'American Express' ? 4 : 3;
  if (!new RegExp(`^\\d{${cvcDigits}}$`).test(input.cvc.trim())) return { error: "Your card's security code is invalid." };
  if (!input.name.trim()) return { error: 'Enter the name on your card.' };
  return { number, last4: number.slice(-4), brand };
}

/** What happens when a valid card pays; null for a valid number that is not a test card. */
export function outcomeOf(number: string): CardOutcome | null {
  if (PAYS.has(number)) return { kind: 'paid' };
  const message = DECLINES[number];
  return message ? { kind: 'declined', message } : null;
}

export function paymentMethodLabel(brand: string | null, last4: string | null): string | null {
  return last4 ? `${brand ?? 'Card'} •••• ${last4}` : null;
}
