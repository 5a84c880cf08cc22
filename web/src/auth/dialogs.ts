import { useSyncExternalStore } from 'react';

/**
 * Which account popup is open. One store for the whole app so a link in one popup (Login → Forgot Password) or on a
 * page (Account Details → Forgot Password?) can close itself and open another; SiteHeader renders the popups.
 */
export type AuthDialogName = 'login' | 'signup' | 'forgot';

let current: AuthDialogName | null = null;
const listeners = new Set<() => void>();

export function openAuthDialog(name: AuthDialogName | null): void {
  current = name;
  listeners.forEach((fn) => fn());
}

export function closeAuthDialog(): void {
  openAuthDialog(null);
}

function subscribe(fn: () => void) {
  listeners.add(fn);
  return () => {
    listeners.delete(fn);
  };
}

export function useAuthDialog(): AuthDialogName | null {
  return useSyncExternalStore(subscribe, () => current, () => null);
}
