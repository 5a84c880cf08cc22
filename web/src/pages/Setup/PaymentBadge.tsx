import styles from './Setup.module.css';

/** The payment provider mark under the summary: card payments through a hosted, encrypted checkout. */
export function PaymentBadge() {
  return (
    <div className={styles.badge}>
      <svg viewBox="0 0 64 40" width="48" height="30" aria-hidden="true" focusable="false">
        <rect x="1" y="1" width="62" height="38" rx="6" fill="#1a1f71" />
        <rect x="8" y="10" width="12" height="9" rx="2" fill="#f5c04a" />
        <rect x="8" y="26" width="20" height="3" rx="1.5" fill="#c9cff5" />
        <rect x="32" y="26" width="10" height="3" rx="1.5" fill="#c9cff5" />
        <circle cx="46" cy="14" r="7" fill="#eb001b" opacity="0.9" />
        <circle cx="54" cy="14" r="7" fill="#f79e1b" opacity="0.9" />
      </svg>
      <span className={styles.badgeText}>
        <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
          <path d="M4 7V5a4 4 0 118 0v2h.5A1.5 1.5 0 0114 8.5v5a1.5 1.5 0 01-1.5 1.5h-9A1.5 1.5 0 012 13.5v-5A1.5 1.5 0 013.5 7H4zm2 0h4V5a2 2 0 10-4 0v2z" fill="currentColor" />
        </svg>
        Secure card payment
      </span>
    </div>
  );
}
