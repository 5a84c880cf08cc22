import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../../api/http';
import { disableTotp, twoFactorKey, twoFactorQuery } from '../../api/twoFactor';
import { useAuth } from '../../auth/AuthProvider';
import { FormMessage } from '../../components/FormMessage';
import { PasswordField, TextField } from '../../components/PasswordField';
import { Spinner } from '../../components/Spinner';
import { TwoFactorSetup } from '../../components/TwoFactorSetup';
import forms from '../../components/forms.module.css';
import styles from './Profile.module.css';

/** Account Details' two-factor section (issue 23.2): turn it on (QR code, first code, recovery codes) or off. */
export function TwoFactorSection() {
  const { user } = useAuth();
  const status = useQuery({ ...twoFactorQuery(user?.uid ?? ''), enabled: !!user });
  const [turningOff, setTurningOff] = useState(false);
  const [settingUp, setSettingUp] = useState(false);

  const on = !!status.data?.enabled;
  return (
    <section className={styles.card} aria-labelledby="two-factor-heading" aria-busy={status.isPending}>
      <div className={styles.row}>
        <div>
          <h2 id="two-factor-heading" className={styles.heading}>
            Two-factor sign-in
          </h2>
          <p className={styles.hint}>
            {on
              ? `On. You sign in with your password and a code from your authenticator app. ${status.data!.recoveryCodesLeft} of 10 recovery codes left.`
              : 'Off. Add a code from an authenticator app on your phone to every sign-in.'}
            {status.data?.required && !status.data.enabled ? ' Operators need it to open the operator console.' : ''}
          </p>
        </div>
        {on && !turningOff && !settingUp ? (
          <button type="button" className={forms.secondary} onClick={() => setTurningOff(true)}>
            Turn off
          </button>
        ) : null}
      </div>
      {status.isPending ? <Spinner label="Loading" center /> : null}
      {status.isError ? <FormMessage>We couldn&apos;t load your two-factor settings.</FormMessage> : null}
      {status.data && (!status.data.enabled || settingUp) ? (
        <div className={styles.section}>
          <TwoFactorSetup onStart={() => setSettingUp(true)} onDone={() => setSettingUp(false)} startLabel="Turn on" />
        </div>
      ) : null}
      {on && turningOff ? <TurnOff onClose={() => setTurningOff(false)} /> : null}
    </section>
  );
}

function TurnOff({ onClose }: { onClose(): void }) {
  const queryClient = useQueryClient();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (!password || !code.trim()) return setError('Enter your password and a code from your app (or a recovery code).');
    setBusy(true);
    setError('');
    try {
      await disableTotp({ password, code: code.trim() });
      await queryClient.invalidateQueries({ queryKey: twoFactorKey });
      onClose();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Something went wrong, please try again');
      setBusy(false);
    }
  };

  return (
    <form className={`${forms.form} ${styles.section}`} onSubmit={submit} noValidate aria-label="Turn off two-factor sign-in">
      <div className={styles.fields}>
        <PasswordField label="Password" name="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} maxLength={200} />
        <TextField label="Code or recovery code" name="one-time-code" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} maxLength={40} />
      </div>
      <FormMessage>{error}</FormMessage>
      <div className={styles.buttons}>
        <button type="button" className={forms.secondary} onClick={onClose}>
          Cancel
        </button>
        <button type="submit" className={forms.submit} disabled={busy}>
          {busy ? <Spinner small label="Turning off" /> : null}
          Turn off two-factor sign-in
        </button>
      </div>
    </form>
  );
}
