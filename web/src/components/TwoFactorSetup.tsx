import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { TotpSetup } from '@hyperdesk/contract';
import { ApiError } from '../api/http';
import { confirmTotp, startTotpSetup, twoFactorKey } from '../api/twoFactor';
import { adoptSession } from '../auth/actions';
import { FormMessage } from './FormMessage';
import { TextField } from './PasswordField';
import { Spinner } from './Spinner';
import forms from './forms.module.css';
import styles from './TwoFactor.module.css';

/**
 * Turning on two-factor sign-in (issue 23.2), on the Profile page and as the console's enrol step: a QR code and the
 * secret (shown once), a first code to confirm, then the ten recovery codes (shown once). `onDone` runs when the
 * user has put the recovery codes away; the tab is signed in with the second factor from the confirmation on.
 */
export function TwoFactorSetup({ onDone, onStart, startLabel = 'Turn on two-factor sign-in' }: { onDone(): void; onStart?(): void; startLabel?: string }) {
  const queryClient = useQueryClient();
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const start = async () => {
    setBusy(true);
    setError('');
    try {
      setSetup(await startTotpSetup());
      onStart?.();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Something went wrong, please try again');
    }
    setBusy(false);
  };

  const confirm = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (!/^\d{6}$/.test(code.replace(/\s/g, ''))) return setError('Enter the 6-digit code your app shows for Hyperdesk.');
    setBusy(true);
    setError('');
    try {
      const enabled = await confirmTotp(code.replace(/\s/g, ''));
      adoptSession(enabled.session);
      setCodes(enabled.recoveryCodes);
      void queryClient.invalidateQueries({ queryKey: twoFactorKey });
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Something went wrong, please try again');
    }
    setBusy(false);
  };

  if (codes) return <RecoveryCodes codes={codes} onDone={onDone} />;

  if (!setup) {
    return (
      <div className={styles.stack}>
        <FormMessage>{error}</FormMessage>
        <div>
          <button type="button" className={forms.submit} onClick={() => void start()} disabled={busy}>
            {busy ? <Spinner small label="Preparing" /> : null}
            {startLabel}
          </button>
        </div>
      </div>
    );
  }

  return (
    <div className={styles.setup}>
      <img className={styles.qr} src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(setup.qrSvg)}`} alt="QR code for your authenticator app" width={184} height={184} />
      <form className={forms.form} onSubmit={confirm} noValidate>
        <ol className={styles.steps}>
          <li>Scan the QR code with an authenticator app (Google Authenticator, Microsoft Authenticator, 1Password, Bitwarden…).</li>
          <li>
            Or type this key into the app:
            <code className={styles.secret} aria-label="Setup key">
              {setup.secret.match(/.{1,4}/g)!.join(' ')}
            </code>
          </li>
          <li>Enter the 6-digit code the app shows.</li>
        </ol>
        <TextField label="Authentication code" name="one-time-code" autoComplete="one-time-code" inputMode="numeric" placeholder="123456" value={code} onChange={(e) => setCode(e.target.value.replace(/[^\d\s]/g, ''))} maxLength={7} />
        <FormMessage>{error}</FormMessage>
        <div>
          <button type="submit" className={forms.submit} disabled={busy}>
            {busy ? <Spinner small label="Verifying" /> : null}
            Verify and turn on
          </button>
        </div>
      </form>
    </div>
  );
}

/** The ten recovery codes, once: copy or download them, then go on. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone(): void }) {
  const [copied, setCopied] = useState(false);
  const text = `Hyperdesk recovery codes (each works once)\n\n${codes.join('\n')}\n`;
  const copy = async () => {
    await navigator.clipboard.writeText(text).then(() => setCopied(true), () => setCopied(false));
  };
  const href = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  return (
    <div className={styles.stack}>
      <FormMessage tone="success">Two-factor sign-in is on.</FormMessage>
      <p className={styles.hint}>
        Save these recovery codes somewhere safe. Each one signs you in once if you lose your phone. They are shown only now.
      </p>
      <ul className={styles.codes} aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className={styles.actions}>
        <button type="button" className={forms.secondary} onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy codes'}
        </button>
        <a className={forms.secondary} href={href} download="hyperdesk-recovery-codes.txt">
          Download
        </a>
        <button type="button" className={forms.submit} onClick={onDone}>
          I saved my recovery codes
        </button>
      </div>
    </div>
  );
}
