import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import type { BalanceEntry } from '@hyperdesk/contract';
import { emailVerificationQuery } from '../../api/auth';
import { useAuth } from '../../auth/AuthProvider';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import { DashboardSidebar } from './DashboardSidebar';
import { EmptyState, StudentEmptyState } from './EmptyState';
import { MachineList } from './MachineList';
import { useBalance } from './useBalance';
import { VerifyBanner } from './VerifyBanner';
import styles from './Dashboard.module.css';

export default function Dashboard() {
  const balance = useBalance();
  const entries = balance.data;
  // An address on a course list that is not verified yet has no entries: that user is a student waiting for their
  // course, not someone to send to the setup (issue 22: students never see buying controls).
  const { user } = useAuth();
  const verification = useQuery({ ...emailVerificationQuery(user?.uid ?? ''), enabled: !!user });
  const awaitingCourse = verification.data ? !verification.data.emailVerified && verification.data.rosterCourses > 0 : null;

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
  } else if (!entries?.length && awaitingCourse === null && verification.isPending) body = <Spinner label="Loading your machines" center />;
  else if (!entries?.length) body = awaitingCourse ? <StudentEmptyState /> : <EmptyState />;
  else body = <MachineList entries={entries} />;

  return (
    <AppLayout title="Your Cloud Machines" sidebar={<DashboardSidebar />}>
      <VerifyBanner />
      {entries?.length ? (
        <div className={styles.toolbar}>
          <p className={styles.toolbarText}>{toolbarText(entries)}</p>
          {buysHours(entries) ? (
            <Link to="/setup" className={styles.secondary}>
              Buy more hours
            </Link>
          ) : null}
        </div>
      ) : null}
      {body}
    </AppLayout>
  );
}

/** Students use the machines their instructor bought: only a user with machines or courses of their own buys hours. */
export function buysHours(entries: BalanceEntry[]): boolean {
  return entries.some((e) => e.role !== 'STUDENT');
}

/** The hint above the list, for the roles the user's entries have. */
function toolbarText(entries: BalanceEntry[]): string {
  if (entries.every((e) => e.role === 'STUDENT')) return 'Connect once your Instructor has started the machines.';
  if (entries.every((e) => e.role === 'INSTRUCTOR')) return 'Start All when your class begins.';
  return 'Start a machine, then Connect to open its desktop in a new tab.';
}
