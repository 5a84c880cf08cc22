import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { AUTH_MESSAGES } from '@hyperdesk/contract';
import { ApiError } from '../api/http';
import { signIn, signInWithCode } from '../auth/actions';
import { authDialogPrefill, closeAuthDialog, openAuthDialog } from '../auth/dialogs';
import { CodeStep } from './CodeStep';
import { Dialog } from './Dialog';
import { FormMessage } from './FormMessage';
import { PasswordField, TextField } from './PasswordField';
import { Spinner } from './Spinner';
import { SsoButtons } from './SsoButtons';
import styles from './forms.module.css';

/**
 * Login popup (spec §2, §5: no client-side checks; §8 failure message). An account with two-factor sign-in gets a
 * second step for its code (issue 23.2); `/?login=1&mfa=<challenge>` (an SSO sign-in) opens at that step.
 */
export function LoginDialog({ open, onOpenChange }: { open: boolean; onOpenChange(open: boolean): void }) {
  const navigate = useNavigate();
  const [email, setEmail] = useState(() => authDialogPrefill().email ?? '');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState(() => authDialogPrefill().mfa ?? '');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const done = () => {
    closeAuthDialog();
    navigate('/dashboard');
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    setError('');
    setBusy(true);
    try {
      const answer = await signIn(email.trim(), password);
      if ('challenge' in answer) {
        setChallenge(answer.challenge);
        setBusy(false);
        return;
      }
      done();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 429 ? err.message : AUTH_MESSAGES['auth/login-failed']);
      setBusy(false);
    }
  };

  if (challenge) {
    return (
      <Dialog open={open} onOpenChange={onOpenChange} title="Two-factor sign-in" description="One more step to keep your account safe.">
        <CodeStep
          onCode={async (code) => {
            await signInWithCode(challenge, code);
            done();
          }}
          onExpired={(message) => {
            setChallenge('');
            setPassword('');
            setError(message);
          }}
        />
      </Dialog>
    );
  }

  return (
    <Dialog open={open} onOpenChange={onOpenChange} title="Login" description="Welcome back! Sign in to manage your cloud machines.">
      <form className={styles.form} onSubmit={submit} noValidate>
        <TextField label="Email" type="email" name="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} maxLength={254} />
        <PasswordField label="Password" name="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} maxLength={200} />
        <div className={styles.rowEnd}>
          <button type="button" className={styles.linkButton} onClick={() => openAuthDialog('forgot')}>
            Forgot Password
          </button>
        </div>
        <FormMessage>{error}</FormMessage>
        <button type="submit" className={styles.submit} disabled={busy}>
          {busy ? <Spinner small label="Logging in" /> : null}
          Login
        </button>
        <SsoButtons intent="login" />
        <p className={styles.switch}>
          Don&apos;t have an account?{' '}
          <button type="button" className={styles.linkButton} onClick={() => openAuthDialog('signup')}>
            Sign Up
          </button>
        </p>
      </form>
    </Dialog>
  );
}
