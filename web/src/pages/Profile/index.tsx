import { lazy, Suspense, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { meQuery } from '../../api/auth';
import { useAuth } from '../../auth/AuthProvider';
import { AppLayout } from '../../components/AppLayout';
import { FormMessage } from '../../components/FormMessage';
import { TextField } from '../../components/PasswordField';
import { Spinner } from '../../components/Spinner';
import forms from '../../components/forms.module.css';
import styles from './Profile.module.css';
import { TwoFactorSection } from './TwoFactor';

const ChangePasswordDialog = lazy(() =>
  import('../../components/ChangePasswordDialog').then((m) => ({ default: m.ChangePasswordDialog })),
);

/** /profile, Account Details (spec §2): read-only name and e-mail, the Change Password modal, two-factor sign-in. */
export default function Profile() {
  const { user } = useAuth();
  const me = useQuery({ ...meQuery(user?.uid ?? ''), enabled: !!user });
  const [changing, setChanging] = useState(false);

  return (
    <AppLayout title="Account Details">
      <section className={styles.card} aria-labelledby="profile-heading" aria-busy={me.isPending}>
        <h2 id="profile-heading" className={styles.heading}>
          Profile
        </h2>
        {me.isPending ? (
          <Spinner label="Loading your account" center />
        ) : me.isError ? (
          <div className={styles.error}>
            <FormMessage>We couldn&apos;t load your account details.</FormMessage>
            <button type="button" className={forms.secondary} onClick={() => void me.refetch()}>
              Try again
            </button>
          </div>
        ) : (
          <div className={styles.fields}>
            <TextField label="Display Name" value={me.data.displayName} disabled readOnly />
            <TextField label="E-mail" type="email" value={me.data.email} disabled readOnly />
          </div>
        )}
      </section>
      <section className={styles.card} aria-labelledby="security-heading">
        <div className={styles.row}>
          <div>
            <h2 id="security-heading" className={styles.heading}>
              Password
            </h2>
            <p className={styles.hint}>Changing your password signs you out on your other devices.</p>
          </div>
          <button
            type="button"
            className={forms.submit}
            onClick={() => setChanging(true)}
            onPointerEnter={() => void import('../../components/ChangePasswordDialog')}
          >
            Change Password
          </button>
        </div>
      </section>
      <TwoFactorSection />
      {changing ? (
        <Suspense fallback={null}>
          <ChangePasswordDialog open onOpenChange={setChanging} />
        </Suspense>
      ) : null}
    </AppLayout>
  );
}
