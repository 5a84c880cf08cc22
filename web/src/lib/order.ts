import type { CountryId, PlatformName } from '@hyperdesk/contract';

/**
 * Order data kept in the browser between the pay click and the payment result pages (spec §3). Business orders
 * add the course fields. `amount` is in major units of the country's currency.
 */
export interface StoredOrder {
  country: CountryId;
  hours: number;
  amount: number;
  payment_url: string;
  platform?: PlatformName;
  studentsCount?: number;
  /** Course dates as epoch milliseconds. */
  startDate?: number;
  endDate?: number;
}

const KEY = 'hyperdesk.order';

export function saveOrder(order: StoredOrder): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(order));
  } catch {
    /* storage full or disabled: the result pages fall back to the server's order status */
  }
}

export function loadOrder(): StoredOrder | null {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return null;
    const o = JSON.parse(raw) as Partial<StoredOrder>;
    if (typeof o.country !== 'string' || typeof o.hours !== 'number' || typeof o.amount !== 'number') return null;
    return { ...o, payment_url: typeof o.payment_url === 'string' ? o.payment_url : '' } as StoredOrder;
  } catch {
    return null;
  }
}

/** The saved checkout address, only when it is an http(s) URL (the value comes from storage anyone can edit). */
export function retryUrlOf(order: StoredOrder | null): string | null {
  if (!order?.payment_url) return null;
  try {
    const u = new URL(order.payment_url, window.location.origin);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : null;
  } catch {
    return null;
  }
}

/** The course fields of a business order, or null for an individual one. */
export function courseOfOrder(o: StoredOrder | null): { studentsCount: number; startDate: number; endDate: number } | null {
  return o?.studentsCount && o.startDate && o.endDate ? { studentsCount: o.studentsCount, startDate: o.startDate, endDate: o.endDate } : null;
}
