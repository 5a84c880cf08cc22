import type { InstanceStatus } from '@hyperdesk/contract';
import styles from './Dashboard.module.css';

const LABEL: Record<InstanceStatus, string> = { offline: 'Offline', processing: 'Processing', online: 'Online' };

export function StatusBadge({ status }: { status: InstanceStatus }) {
  return (
    <span className={`${styles.badge} ${styles[`badge_${status}`]}`}>
      <span className={styles.badgeDot} aria-hidden="true" />
      {LABEL[status]}
    </span>
  );
}
