import { useState, type FormEvent } from 'react';
import { SsoProviderCreate, SsoProviderUpdate, type SsoProvider } from '@hyperdesk/contract';
import { createSsoProvider, updateSsoProvider } from '../../api/sso';
import { Dialog } from '../../components/Dialog';
import { Spinner } from '../../components/Spinner';
import forms from '../../components/forms.module.css';
import styles from './Admin.module.css';

/** "school.edu, students.school.edu" or one per line → the domain list (the contract checks each). */
const domainsOf = (text: string) => text.split(/[\s,;]+/).map((d) => d.trim().replace(/^@/, '')).filter(Boolean);

/**
 * Add or edit an identity provider. The server reads the issuer's discovery document before it saves an enabled
 * provider, so a wrong issuer URL is reported here. On edit the secret field is empty: leaving it so keeps the
 * stored secret (which the console never sees).
 */
export function SsoProviderDialog({ provider, onClose, onSaved }: { provider: SsoProvider | null; onClose(): void; onSaved(message: string): void }) {
  const [form, setForm] = useState(() => ({
    name: provider?.name ?? '',
    issuer: provider?.issuer ?? '',
    clientId: provider?.clientId ?? '',
    clientSecret: '',
    domains: provider?.domains.join(', ') ?? '',
    enabled: provider?.enabled ?? true,
  }));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: 'name' | 'issuer' | 'clientId' | 'clientSecret' | 'domains') => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    const input = { ...form, domains: domainsOf(form.domains) };
    const parsed = provider ? SsoProviderUpdate.safeParse(input) : SsoProviderCreate.safeParse(input);
    if (!parsed.success) return setError(parsed.error.issues[0]?.message ?? 'Check the fields.');
    setError(null);
    setBusy(true);
    try {
      const saved = provider ? await updateSsoProvider(provider.id, parsed.data) : await createSsoProvider(parsed.data as SsoProviderCreate);
      onSaved(provider ? `${saved.name} saved.` : `${saved.name} added: "Continue with ${saved.name}" is ${saved.enabled ? 'in the sign-in popups' : 'off until you enable it'}.`);
      onClose();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={provider ? `Edit ${provider.name}` : 'Add identity provider'} description="An OpenID Connect provider that states verified e-mail addresses: Google Workspace, Keycloak, Okta and others.">
      <form className={styles.form} onSubmit={submit} noValidate>
        <label>
          School name (the button says "Continue with …")
          <input value={form.name} onChange={set('name')} maxLength={60} placeholder="Springfield High" />
        </label>
        <label>
          Issuer URL
          <input type="url" value={form.issuer} onChange={set('issuer')} maxLength={500} placeholder="https://accounts.google.com" spellCheck={false} />
        </label>
        <label>
          Client id
          <input value={form.clientId} onChange={set('clientId')} maxLength={300} spellCheck={false} autoComplete="off" />
        </label>
        <label>
          Client secret
          <input type="password" value={form.clientSecret} onChange={set('clientSecret')} maxLength={1000} autoComplete="new-password" placeholder={provider ? 'Leave empty to keep the stored secret' : ''} />
        </label>
        <label>
          Allowed e-mail domains
          <input value={form.domains} onChange={set('domains')} placeholder="springfield.edu, students.springfield.edu" spellCheck={false} />
          <span className={styles.sub} style={{ fontWeight: 400 }}>Only verified addresses at these domains can sign in (exact match, comma separated).</span>
        </label>
        <label style={{ flexDirection: 'row', alignItems: 'center', gap: 8 }}>
          <input type="checkbox" checked={form.enabled} onChange={(e) => setForm((f) => ({ ...f, enabled: e.target.checked }))} style={{ minHeight: 0 }} />
          Show it in the sign-in popups
        </label>
        {error ? <p className={`${styles.status} ${styles.statusError}`} role="alert">{error}</p> : null}
        <div className={styles.actions}>
          <button type="submit" className={forms.submit} disabled={busy}>
            {busy ? <Spinner small label="Saving" /> : null}
            {provider ? 'Save' : 'Add provider'}
          </button>
          <button type="button" className={forms.secondary} onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
