import { Link } from 'react-router';
import type { BalanceEntry } from '@hyperdesk/contract';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import { DashboardSidebar } from './DashboardSidebar';
import { EmptyState } from './EmptyState';
import { MachineList } from './MachineList';
import { useBalance } from './useBalance';
import { VerifyBanner } from './VerifyBanner';
import styles from './Dashboard.module.css';

export default function Dashboard() {
  const balance = useBalance();
  const entries = balance.data;

  let body;
  if (balance.isPending) body = <Spinner label="Loading your machines" center />;
  else if (!entries?.length && balance.isError) {
    // Spec §8: a failed fetch only ends the loading state; offer another try.
    body = (
      <div className={styles.retry}>
        <button type="button" className={styles.secondary} onClick={() => void balance.refetch()}>
          Try again
        </button>
      </div>
    );
  } else if (!entries?.length) body = <EmptyState />;
  else body = <MachineList entries={entries} />;

  return (
    <AppLayout title="Your Cloud Machines" sidebar={<DashboardSidebar />}>
      <VerifyBanner />
      {entries?.length ? (
        <div className={styles.toolbar}>
          <p className={styles.toolbarText}>{toolbarText(entries)}</p>
          <Link to="/setup" className={styles.secondary}>
            Buy more hours
          </Link>
        </div>
      ) : null}
      {body}
    </AppLayout>
  );
}

/** The hint above the list, for the roles the user's entries have. */
function toolbarText(entries: BalanceEntry[]): string {
  if (entries.every((e) => e.role === 'STUDENT')) return 'Connect once your Instructor has started the machines.';
  if (entries.every((e) => e.role === 'INSTRUCTOR')) return 'Start All when your class begins.';
  return 'Start a machine, then Connect to open its desktop in a new tab.';
}
