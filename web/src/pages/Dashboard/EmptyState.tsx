import type { ReactNode } from 'react';
import { Link } from 'react-router';
import styles from './Dashboard.module.css';

const ScreenIcon = ({ children }: { children?: ReactNode }) => (
  <svg viewBox="0 0 64 48" width="72" height="54" aria-hidden="true" focusable="false">
    <rect x="4" y="4" width="56" height="34" rx="4" fill="none" stroke="currentColor" strokeWidth="3" />
    <path d="M22 46h20M32 38v8" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
    {children}
  </svg>
);

/** A student whose course is not shown yet (their address still unverified): nothing to buy, only what comes next. */
export function StudentEmptyState() {
  return (
    <section className={styles.empty}>
      <ScreenIcon>
        <path d="M24 21l6 6 10-11" fill="none" stroke="currentColor" strokeWidth="3" strokeLinecap="round" strokeLinejoin="round" />
      </ScreenIcon>
      <p className={styles.emptyText}>Your course machine will be listed here</p>
      <p className={styles.emptyNote}>Your instructor starts the machines; you connect from here once they run.</p>
    </section>
  );
}

export function EmptyState() {
  return (
    <section className={styles.empty}>
      <ScreenIcon>
        <path d="M26 21h12M32 15v12" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
      </ScreenIcon>
      <p className={styles.emptyText}>Set up your Cloud Machine to get started</p>
      <Link to="/setup" className={styles.primary}>
        Configure your Set up
      </Link>
    </section>
  );
}
