import { lazy, Suspense, useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { TWO_FACTOR_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../../api/http';
import { consoleAccess } from '../../api/twoFactor';
import { signOut } from '../../auth/actions';
import { openAuthDialog } from '../../auth/dialogs';
import { useAuth } from '../../auth/AuthProvider';
import { FormMessage } from '../../components/FormMessage';
import { Spinner } from '../../components/Spinner';
import { TwoFactorSetup } from '../../components/TwoFactorSetup';
import forms from '../../components/forms.module.css';
import styles from './Admin.module.css';

const ChangePasswordDialog = lazy(() => import('../../components/ChangePasswordDialog').then((m) => ({ default: m.ChangePasswordDialog })));

/**
 * The console opens only for a sign-in with a second factor (issue 23.2). It asks GET /v1/admin/access first; a
 * 403 names the step that is missing, and the console shows that step instead of its sections: change the generated
 * first-admin password, turn on two-factor sign-in, or log in again with the code.
 */
export function ConsoleGate({ children }: { children: ReactNode }) {
  const { user } = useAuth();
  const access = useQuery({ queryKey: ['admin', 'access', user?.uid], queryFn: consoleAccess, retry: false, staleTime: 60_000 });
  if (access.isPending) return <Spinner label="Opening the console" center />;
  if (access.isSuccess) return <>{children}</>;
  const code = access.error instanceof ApiError ? access.error.code : undefined;
  const again = () => void access.refetch();
  if (code === 'admin/password-change-required') return <PasswordStep onDone={again} />;
  if (code === 'admin/mfa-enrol-required') return <EnrolStep onDone={again} />;
  if (code === 'admin/mfa-required') return <SignInAgainStep />;
  return (
    <section className={styles.panel}>
      <FormMessage>{access.error instanceof ApiError ? access.error.message : 'We couldn’t open the console.'}</FormMessage>
    </section>
  );
}

function Step({ title, text, children }: { title: string; text: string; children: ReactNode }) {
  return (
    <section className={styles.panel} aria-labelledby="console-step">
      <div className={styles.panelHead}>
        <div>
          <h2 id="console-step">{title}</h2>
          <p className={styles.hint}>{text}</p>
        </div>
      </div>
      {children}
    </section>
  );
}

function PasswordStep({ onDone }: { onDone(): void }) {
  const [open, setOpen] = useState(false);
  return (
    <Step title="Change your password" text={`${TWO_FACTOR_MESSAGES['admin/password-change-required']} The password the admin command printed is for the first sign-in only.`}>
      <button type="button" className={forms.submit} onClick={() => setOpen(true)}>
        Change Password
      </button>
      {open ? (
        <Suspense fallback={null}>
          <ChangePasswordDialog
            open
            onOpenChange={(o) => {
              setOpen(o);
              if (!o) onDone();
            }}
          />
        </Suspense>
      ) : null}
    </Step>
  );
}

function EnrolStep({ onDone }: { onDone(): void }) {
  return (
    <Step title="Turn on two-factor sign-in" text={`${TWO_FACTOR_MESSAGES['admin/mfa-enrol-required']} You will need your authenticator app each time you sign in.`}>
      <TwoFactorSetup onDone={onDone} startLabel="Set up authenticator" />
    </Step>
  );
}

function SignInAgainStep() {
  const again = async () => {
    await signOut();
    openAuthDialog('login');
  };
  return (
    <Step title="Log in with your code" text={TWO_FACTOR_MESSAGES['admin/mfa-required']}>
      <button type="button" className={forms.submit} onClick={() => void again()}>
        Log in again
      </button>
    </Step>
  );
}
