import { useState, type FormEvent } from 'react';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../api/http';
import { forgotPassword } from '../api/auth';
import { Dialog } from './Dialog';
import { DoneIcon, FormMessage } from './FormMessage';
import { TextField } from './PasswordField';
import { Spinner } from './Spinner';
import styles from './forms.module.css';

/** Forgot Password popup (spec §5, §8): sends a single-use reset link by e-mail. */
export function ForgotPasswordDialog({ open, onOpenChange }: { open: boolean; onOpenChange(open: boolean): void }) {
  const [email, setEmail] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (!email.trim()) return setError('Please enter your email.');
    setError('');
    setBusy(true);
    try {
      await forgotPassword(email.trim());
      setSent(true);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 429 ? err.message : AUTH_MESSAGES['auth/reset-failed']);
    } finally {
      setBusy(false);
    }
  };

  if (sent) {
    return (
      <Dialog open={open} onOpenChange={onOpenChange} title="Resent Link Sent!">
        <div className={styles.done}>
          <DoneIcon />
          <p className={styles.doneText}>Please check your email. Click on the link there and you&apos;ll be able to enter a new password.</p>
          <button type="button" className={styles.submit} onClick={() => onOpenChange(false)}>
            Got It
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Forgot Password"
      description="Enter the e-mail address of your account and we'll send you a link to set a new password."
    >
      <form className={styles.form} onSubmit={submit} noValidate>
        <TextField label="Email" type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} maxLength={254} />
        <FormMessage>{error}</FormMessage>
        <button type="submit" className={styles.submit} disabled={busy}>
          {busy ? <Spinner small label="Sending" /> : null}
          Send Reset Link
        </button>
      </form>
    </Dialog>
  );
}
