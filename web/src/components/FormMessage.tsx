import type { ReactNode } from 'react';
import styles from './forms.module.css';

/** Inline form result: errors are announced at once (role=alert), successes politely (role=status). */
export function FormMessage({ tone = 'error', children }: { tone?: 'error' | 'success'; children: ReactNode }) {
  if (!children) return null;
  return (
    <p className={`${styles.message} ${tone === 'error' ? styles.error : styles.success}`} role={tone === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}

/** Check-mark used by the success states of the account forms. */
export function DoneIcon() {
  return (
    <svg className={styles.doneIcon} viewBox="0 0 56 56" aria-hidden="true" focusable="false">
      <circle cx="28" cy="28" r="28" fill="currentColor" opacity="0.12" />
      <path d="M17 29l7 7 15-15" fill="none" stroke="currentColor" strokeWidth="3.5" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
