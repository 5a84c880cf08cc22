import { useState, type FormEvent } from 'react';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../api/http';
import { changePassword } from '../auth/actions';
import { openAuthDialog } from '../auth/dialogs';
import { Dialog } from './Dialog';
import { DoneIcon, FormMessage } from './FormMessage';
import { PasswordField } from './PasswordField';
import { Spinner } from './Spinner';
import styles from './forms.module.css';

type Fields = { currentPassword: string; newPassword: string; confirmPassword: string };
const EMPTY: Fields = { currentPassword: '', newPassword: '', confirmPassword: '' };

/** Client rules of spec §5 (Change password), in order; null when the form may be sent. */
function checkPasswordChange(f: Fields): string | null {
  if (!f.currentPassword.trim() || !f.newPassword.trim() || !f.confirmPassword.trim()) return 'All fields are required.';
  if (f.newPassword !== f.confirmPassword) return 'New password and confirm password should be same.';
  if (f.currentPassword.trim() === f.newPassword.trim()) return 'New password should not be same.';
  return null;
}

/** Change Password modal of Account Details (spec §2, §4: idle → submitting → success | error). */
export function ChangePasswordDialog({ open, onOpenChange }: { open: boolean; onOpenChange(open: boolean): void }) {
  const [fields, setFields] = useState<Fields>(EMPTY);
  const [error, setError] = useState('');
  const [state, setState] = useState<'idle' | 'submitting' | 'success'>('idle');

  const edit = (k: keyof Fields) => (e: { target: { value: string } }) => {
    setFields((f) => ({ ...f, [k]: e.target.value }));
    // Spec §5: the error clears when the user types in the current or new password.
    if (k !== 'confirmPassword') setError('');
  };

  const close = (o: boolean) => {
    if (!o) {
      setFields(EMPTY);
      setError('');
      setState('idle');
    }
    onOpenChange(o);
  };

  const forgot = () => {
    close(false);
    openAuthDialog('forgot');
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (state === 'submitting') return;
    const problem = checkPasswordChange(fields);
    if (problem) return setError(problem);
    setError('');
    setState('submitting');
    try {
      await changePassword(fields);
      setState('success');
    } catch (err) {
      setError(
        err instanceof ApiError && err.code === 'auth/weak-password'
          ? AUTH_MESSAGES['auth/weak-password']
          : AUTH_MESSAGES['auth/password-change-failed'],
      );
      setState('idle');
    }
  };

  if (state === 'success') {
    return (
      <Dialog open={open} onOpenChange={close} title="Change Password">
        <div className={styles.done}>
          <DoneIcon />
          <p className={styles.doneText} role="status">
            Your password has been updated successfully.
          </p>
          <button type="button" className={styles.submit} onClick={() => close(false)}>
            Got It
          </button>
        </div>
      </Dialog>
    );
  }
  const busy = state === 'submitting';
  return (
    <Dialog open={open} onOpenChange={close} title="Change Password" description="Enter your current password, then choose a new one.">
      <form className={styles.form} onSubmit={submit} noValidate>
        <PasswordField label="Current Password" name="currentPassword" autoComplete="current-password" value={fields.currentPassword} onChange={edit('currentPassword')} maxLength={200} />
        <div className={styles.rowEnd}>
          <button type="button" className={styles.linkButton} onClick={forgot}>
            Forgot Password?
          </button>
        </div>
        <PasswordField label="New Password" name="newPassword" autoComplete="new-password" value={fields.newPassword} onChange={edit('newPassword')} maxLength={200} />
        <PasswordField
          label="Re-enter New Password"
          name="confirmPassword"
          autoComplete="new-password"
          value={fields.confirmPassword}
          onChange={edit('confirmPassword')}
          maxLength={200}
        />
        <FormMessage>{error}</FormMessage>
        <button type="submit" className={styles.submit} disabled={busy}>
          {busy ? <Spinner small label="Changing password" /> : null}
          Change Password
        </button>
      </form>
    </Dialog>
  );
}
