import { useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { VERIFY_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../../api/http';
import { emailVerificationKey, emailVerificationQuery, resendVerification, verifyEmail } from '../../api/auth';
import { balanceKey } from '../../api/wallet';
import { openAuthDialog } from '../../auth/dialogs';
import { session } from '../../auth/session';
import { useAuth } from '../../auth/AuthProvider';
import { AppLayout } from '../../components/AppLayout';
import { DoneIcon, FormMessage } from '../../components/FormMessage';
import { Spinner } from '../../components/Spinner';
import forms from '../../components/forms.module.css';
import styles from '../ResetPassword/ResetPassword.module.css';
import own from './VerifyEmail.module.css';

type State = { kind: 'checking' } | { kind: 'done'; email: string } | { kind: 'failed'; code: string; message: string };

/** /verify-email?token=… : the page the verification and invitation e-mails link to (single-use link). */
export default function VerifyEmail() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const auth = useAuth();
  const qc = useQueryClient();
  const [state, setState] = useState<State>(
    token ? { kind: 'checking' } : { kind: 'failed', code: 'verify/link-invalid', message: VERIFY_MESSAGES['verify/link-invalid'] },
  );
  const spent = useRef(false);

  useEffect(() => {
    // The link works once: wait for the session (so a signed-in caller is checked) and call the server only once.
    if (!token || spent.current || auth.status === 'loading') return;
    spent.current = true;
    verifyEmail(token)
      .then(async (r) => {
        // A fresh id token carries the email_verified claim the course checks read.
        if (session.current()) await session.refresh();
        await qc.invalidateQueries({ queryKey: emailVerificationKey });
        await qc.invalidateQueries({ queryKey: balanceKey });
        setState({ kind: 'done', email: r.email });
      })
      .catch((err) => {
        const code = err instanceof ApiError && err.code ? err.code : 'error';
        const message = code in VERIFY_MESSAGES ? VERIFY_MESSAGES[code as keyof typeof VERIFY_MESSAGES] : err instanceof ApiError && err.status === 429 ? err.message : 'Something went wrong, please try again.';
        setState({ kind: 'failed', code, message });
      });
  }, [token, auth.status, qc]);

  return (
    <AppLayout>
      <section className={styles.card} aria-live="polite">
        {state.kind === 'checking' ? (
          <Spinner label="Verifying your e-mail address" center />
        ) : state.kind === 'done' ? (
          <div className={forms.done}>
            <DoneIcon />
            <h1 className={styles.title}>E-mail address verified</h1>
            <p className={forms.doneText} role="status">
              Thank you: {state.email} is verified. Courses your instructor added you to now appear on your dashboard.
            </p>
            {auth.status === 'signedIn' ? (
              <Link to="/dashboard" className={`${forms.submit} ${own.link}`}>
                Go to Dashboard
              </Link>
            ) : (
              <button type="button" className={forms.submit} onClick={() => openAuthDialog('login')}>
                Login
              </button>
            )}
          </div>
        ) : (
          <div className={forms.done}>
            <h1 className={styles.title}>Verify your e-mail address</h1>
            <FormMessage>{state.message}</FormMessage>
            <FailedAction code={state.code} uid={auth.user?.uid ?? null} />
          </div>
        )}
      </section>
    </AppLayout>
  );
}

/** What the visitor can do next: a new link (signed in), sign up first, or log in. */
function FailedAction({ code, uid }: { code: string; uid: string | null }) {
  const [sent, setSent] = useState<'idle' | 'sending' | 'sent' | 'error'>('idle');
  const status = useQuery({ ...emailVerificationQuery(uid ?? ''), enabled: !!uid });
  if (status.data?.emailVerified) {
    return (
      <>
        <p className={forms.doneText} role="status">
          Your e-mail address is verified already.
        </p>
        <Link to="/dashboard" className={`${forms.submit} ${own.link}`}>
          Go to Dashboard
        </Link>
      </>
    );
  }
  if (code === 'verify/no-account') {
    return (
      <button type="button" className={forms.submit} onClick={() => openAuthDialog('signup')}>
        Sign Up
      </button>
    );
  }
  if (code === 'verify/other-account') return null;
  if (code === 'verify/login-required') {
    return (
      <button type="button" className={forms.submit} onClick={() => openAuthDialog('login')}>
        Login
      </button>
    );
  }
  if (!uid) {
    return (
      <>
        <p className={styles.lead}>Log in to get a new link.</p>
        <button type="button" className={forms.submit} onClick={() => openAuthDialog('login')}>
          Login
        </button>
      </>
    );
  }
  const resend = async () => {
    setSent('sending');
    try {
      await resendVerification();
      setSent('sent');
    } catch {
      setSent('error');
    }
  };
  return (
    <>
      {sent === 'sent' ? <FormMessage tone="success">We sent you a new link. Please check your inbox.</FormMessage> : null}
      {sent === 'error' ? <FormMessage>Something went wrong, please try again.</FormMessage> : null}
      <button type="button" className={forms.submit} onClick={() => void resend()} disabled={sent === 'sending' || sent === 'sent'}>
        {sent === 'sending' ? <Spinner small label="Sending" /> : null}
        Resend e-mail
      </button>
    </>
  );
}
