import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../api/http';
import { signUp } from '../auth/actions';
import { authDialogPrefill, closeAuthDialog, openAuthDialog } from '../auth/dialogs';
import { Captcha } from './Captcha';
import { Dialog } from './Dialog';
import { FormMessage } from './FormMessage';
import { PasswordField, TextField } from './PasswordField';
import { Spinner } from './Spinner';
import { SsoButtons } from './SsoButtons';
import styles from './forms.module.css';

/** Server codes with their own message (spec §8); anything else is the generic sign-up failure. */
const SERVER_MESSAGES: Record<string, string> = {
  'auth/weak-password': AUTH_MESSAGES['auth/weak-password'],
  'auth/email-already-in-use': AUTH_MESSAGES['auth/email-already-in-use'],
  'auth/invalid-email': AUTH_MESSAGES['auth/invalid-email'],
  'auth/captcha-required': AUTH_MESSAGES['auth/captcha-required'],
};

function signupError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code && SERVER_MESSAGES[err.code]) return SERVER_MESSAGES[err.code]!;
    if (err.status === 429) return err.message;
  }
  return AUTH_MESSAGES['auth/signup-failed'];
}

/** Sign Up popup (spec §2, §5, §8). */
export function SignupDialog({ open, onOpenChange }: { open: boolean; onOpenChange(open: boolean): void }) {
  const navigate = useNavigate();
  const [form, setForm] = useState(() => ({ name: '', email: authDialogPrefill().email ?? '', password: '', confirmPassword: '' }));
  const [captcha, setCaptcha] = useState<string | null>(null);
  const [captchaKey, setCaptchaKey] = useState(0);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    const name = form.name.trim();
    const email = form.email.trim();
    if (!name || !email || !form.password.trim() || !form.confirmPassword.trim()) return setError(AUTH_MESSAGES['auth/fields-required']);
    if (form.password !== form.confirmPassword) return setError(AUTH_MESSAGES['auth/password-mismatch']);
    if (!captcha) return setError(AUTH_MESSAGES['auth/captcha-required']);
    setError('');
    setBusy(true);
    try {
      await signUp({ name, email, password: form.password, confirmPassword: form.confirmPassword, captcha });
      sessionStorage.setItem('signup_username', name);
      closeAuthDialog();
      navigate('/welcome');
    } catch (err) {
      setError(signupError(err));
      // A captcha solution is accepted once: ask for a fresh one before the next try.
      setCaptcha(null);
      setCaptchaKey((k) => k + 1);
      setBusy(false);
    }
  };

  return (
    <Dialog open={open} onOpenChange={onOpenChange} title="Sign Up" description="Create your account to set up a cloud machine.">
      <form className={styles.form} onSubmit={submit} noValidate>
        <TextField label="Name" name="name" autoComplete="name" value={form.name} onChange={set('name')} maxLength={100} />
        <TextField label="Email" type="email" name="email" autoComplete="email" value={form.email} onChange={set('email')} maxLength={254} />
        <PasswordField label="Password" name="password" autoComplete="new-password" value={form.password} onChange={set('password')} maxLength={200} />
        <PasswordField
          label="Re-enter Password"
          name="confirmPassword"
          autoComplete="new-password"
          value={form.confirmPassword}
          onChange={set('confirmPassword')}
          maxLength={200}
        />
        <Captcha
          key={captchaKey}
          onChange={(payload) => {
            setCaptcha(payload);
            // A solved captcha answers the captcha message; other messages stay until the next submit.
            if (payload) setError((e) => (e === AUTH_MESSAGES['auth/captcha-required'] ? '' : e));
          }}
        />
        <FormMessage>{error}</FormMessage>
        <button type="submit" className={styles.submit} disabled={busy}>
          {busy ? <Spinner small label="Signing up" /> : null}
          Sign Up
        </button>
        <SsoButtons intent="signup" />
        <p className={styles.switch}>
          Already have an account?{' '}
          <button type="button" className={styles.linkButton} onClick={() => openAuthDialog('login')}>
            Login
          </button>
        </p>
      </form>
    </Dialog>
  );
}
