import { useState, type FormEvent } from 'react';
import { TWO_FACTOR_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../api/http';
import { FormMessage } from './FormMessage';
import { TextField } from './PasswordField';
import { Spinner } from './Spinner';
import styles from './forms.module.css';

/**
 * The code step of a sign-in (issue 23.2): the 6-digit code of the authenticator app, or one recovery code.
 * `onCode` sends it; an expired challenge (too many tries, five minutes) sends the user back with `onExpired`.
 */
export function CodeStep({ onCode, onExpired }: { onCode(code: string): Promise<void>; onExpired(message: string): void }) {
  const [recovery, setRecovery] = useState(false);
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (!code.trim()) return setError(recovery ? 'Enter one of your recovery codes.' : 'Enter the 6-digit code from your authenticator app.');
    setError('');
    setBusy(true);
    try {
      await onCode(code.trim());
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && err.code === 'auth/mfa-expired') return onExpired(TWO_FACTOR_MESSAGES['auth/mfa-expired']);
      setError(err instanceof ApiError && (err.status === 429 || err.status === 401) ? err.message : 'Something went wrong, please try again');
    }
  };

  const toggle = () => {
    setRecovery((r) => !r);
    setCode('');
    setError('');
  };

  return (
    <form className={styles.form} onSubmit={submit} noValidate>
      <p className={styles.switch}>
        {recovery
          ? 'Enter one of the recovery codes you saved when you turned on two-factor sign-in. Each code works once.'
          : 'Open your authenticator app and enter the 6-digit code for Hyperdesk.'}
      </p>
      {recovery ? (
        <TextField key="recovery" label="Recovery code" name="recovery-code" autoComplete="off" spellCheck={false} placeholder="xxxx-xxxx-xxxx-xxxx" value={code} onChange={(e) => setCode(e.target.value)} maxLength={40} autoFocus />
      ) : (
        <TextField key="totp" label="Authentication code" name="one-time-code" autoComplete="one-time-code" inputMode="numeric" placeholder="123456" value={code} onChange={(e) => setCode(e.target.value.replace(/[^\d\s]/g, ''))} maxLength={7} autoFocus />
      )}
      <div className={styles.rowEnd}>
        <button type="button" className={styles.linkButton} onClick={toggle}>
          {recovery ? 'Use your authenticator app' : 'Use a recovery code'}
        </button>
      </div>
      <FormMessage>{error}</FormMessage>
      <button type="submit" className={styles.submit} disabled={busy}>
        {busy ? <Spinner small label="Verifying" /> : null}
        Verify
      </button>
    </form>
  );
}
