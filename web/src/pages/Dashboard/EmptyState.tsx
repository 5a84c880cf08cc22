import { Link } from 'react-router';
import styles from './Dashboard.module.css';

export function EmptyState() {
  return (
    <section className={styles.empty}>
      <svg viewBox="0 0 64 48" width="72" height="54" aria-hidden="true" focusable="false">
        <rect x="4" y="4" width="56" height="34" rx="4" fill="none" stroke="currentColor" strokeWidth="3" />
        <path d="M22 46h20M32 38v8" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
        <path d="M26 21h12M32 15v12" stroke="currentColor" strokeWidth="3" strokeLinecap="round" />
      </svg>
      <p className={styles.emptyText}>Set up your Cloud Machine to get started</p>
      <Link to="/setup" className={styles.primary}>
        Configure your Set up
      </Link>
    </section>
  );
}
