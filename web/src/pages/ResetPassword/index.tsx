import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../../api/http';
import { resetPassword } from '../../api/auth';
import { openAuthDialog } from '../../auth/dialogs';
import { AppLayout } from '../../components/AppLayout';
import { DoneIcon, FormMessage } from '../../components/FormMessage';
import { PasswordField } from '../../components/PasswordField';
import { Spinner } from '../../components/Spinner';
import forms from '../../components/forms.module.css';
import styles from './ResetPassword.module.css';

const INVALID_LINK = 'This reset link is invalid or has expired. Please request a new one.';

/** /reset-password?token=… : the page the reset e-mail links to (single-use link, one hour). */
export default function ResetPassword() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState('');
  const [state, setState] = useState<'idle' | 'submitting' | 'done' | 'invalid'>(token ? 'idle' : 'invalid');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (state === 'submitting') return;
    if (!password.trim() || !confirm.trim()) return setError('All fields are required.');
    if (password !== confirm) return setError(AUTH_MESSAGES['auth/password-mismatch']);
    setError('');
    setState('submitting');
    try {
      await resetPassword({ token, password });
      setState('done');
    } catch (err) {
      if (err instanceof ApiError && err.code === 'auth/weak-password') {
        setError(AUTH_MESSAGES['auth/weak-password']);
        setState('idle');
      } else if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
        setState('invalid');
      } else {
        setError(err instanceof ApiError && err.status === 429 ? err.message : AUTH_MESSAGES['auth/reset-failed']);
        setState('idle');
      }
    }
  };

  return (
    <AppLayout>
      <section className={styles.card}>
        {state === 'done' ? (
          <div className={forms.done}>
            <DoneIcon />
            <h1 className={styles.title}>Password reset</h1>
            <p className={forms.doneText} role="status">
              Your password has been reset. You can now log in with your new password.
            </p>
            <button type="button" className={forms.submit} onClick={() => openAuthDialog('login')}>
              Login
            </button>
          </div>
        ) : state === 'invalid' ? (
          <div className={forms.done}>
            <h1 className={styles.title}>Reset your password</h1>
            <FormMessage>{INVALID_LINK}</FormMessage>
            <button type="button" className={forms.submit} onClick={() => openAuthDialog('forgot')}>
              Send a new link
            </button>
          </div>
        ) : (
          <>
            <h1 className={styles.title}>Reset your password</h1>
            <p className={styles.lead}>Choose a new password for your account. It must be at least 6 characters long.</p>
            <form className={forms.form} onSubmit={submit} noValidate>
              <PasswordField label="New Password" name="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} maxLength={200} />
              <PasswordField label="Re-enter New Password" name="confirmPassword" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)} maxLength={200} />
              <FormMessage>{error}</FormMessage>
              <button type="submit" className={forms.submit} disabled={state === 'submitting'}>
                {state === 'submitting' ? <Spinner small label="Saving" /> : null}
                Reset Password
              </button>
            </form>
          </>
        )}
      </section>
    </AppLayout>
  );
}
