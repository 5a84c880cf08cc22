import { useSyncExternalStore } from 'react';

/**
 * Which account popup is open. One store for the whole app so a link in one popup (Login → Forgot Password) or on a
 * page (Account Details → Forgot Password?) can close itself and open another; SiteHeader renders the popups.
 */
export type AuthDialogName = 'login' | 'signup' | 'forgot';

/** What a popup starts with when a link opened it (an invitation names the invited address). */
export interface AuthDialogPrefill {
  email?: string;
  /** The Login popup opens at the code step for this sign-in challenge (`/?login=1&mfa=…`, an SSO sign-in). */
  mfa?: string;
  /** Why a sign-in through the school's provider was refused (`/?login=1&sso_error=sso/…`), shown in the popup. */
  ssoError?: string;
}

let current: AuthDialogName | null = null;
let prefill: AuthDialogPrefill = {};
const listeners = new Set<() => void>();

export function openAuthDialog(name: AuthDialogName | null, values: AuthDialogPrefill = {}): void {
  current = name;
  prefill = values;
  listeners.forEach((fn) => fn());
}

/** The values the open popup was opened with (read once, when it mounts). */
export function authDialogPrefill(): AuthDialogPrefill {
  return prefill;
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
