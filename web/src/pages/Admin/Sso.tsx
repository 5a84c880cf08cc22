import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { SsoProvider } from '@hyperdesk/contract';
import { deleteSsoProvider, ssoProvidersQuery, updateSsoProvider } from '../../api/sso';
import { Dialog } from '../../components/Dialog';
import { Spinner } from '../../components/Spinner';
import forms from '../../components/forms.module.css';
import { ActionStatus, Badge, formatDate, Panel } from './parts';
import { SsoProviderDialog } from './SsoProviderDialog';
import { useAdminAction } from './useAction';
import styles from './Admin.module.css';

/** The edit body of a provider as it stands (the secret left out: the server keeps it). */
const asUpdate = (p: SsoProvider, enabled: boolean) => ({ name: p.name, issuer: p.issuer, clientId: p.clientId, domains: p.domains, enabled });

/**
 * Single sign-on (issue 23.1): the schools' OpenID Connect identity providers. Each enabled one is a "Continue with
 * <name>" button in the Login and Sign Up popups. Add, edit, disable and delete are audited; a client secret is
 * write-only (the server stores it encrypted and never sends it back).
 */
export default function Sso() {
  const result = useQuery(ssoProvidersQuery());
  const action = useAdminAction();
  const [editing, setEditing] = useState<SsoProvider | 'new' | null>(null);
  const [removing, setRemoving] = useState<SsoProvider | null>(null);
  const redirectUri = result.data?.redirectUri;

  return (
    <Panel
      title="Single sign-on"
      hint="Let students and staff sign in with their school account (OpenID Connect). Register the redirect URI below with the school's identity provider, then add it here."
      filters={
        <button type="button" className={forms.submit} onClick={() => setEditing('new')}>
          Add identity provider
        </button>
      }
    >
      {redirectUri ? (
        <p className={styles.hint}>
          Redirect URI: <code className={styles.mono}>{redirectUri}</code>
        </p>
      ) : null}
      <ActionStatus message={action.message} error={action.error} />
      {result.isPending ? (
        <Spinner label="Loading identity providers" center />
      ) : result.isError ? (
        <p className={`${styles.status} ${styles.statusError}`} role="alert">{result.error.message}</p>
      ) : result.data.items.length === 0 ? (
        <p className={styles.state}>No identity provider yet. Add your school's to offer "Continue with …" in the sign-in popups.</p>
      ) : (
        <div className={styles.tableWrap}>
          <table className={styles.table}>
            <caption className="sr-only">Identity providers</caption>
            <thead>
              <tr>
                {['Button', 'Issuer', 'Client id', 'E-mail domains', 'State', 'Actions'].map((c) => (
                  <th key={c} scope="col">{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {result.data.items.map((p) => (
                <tr key={p.id}>
                  <td>
                    Continue with {p.name}
                    <span className={styles.sub}>added {formatDate(p.createdAt)}</span>
                  </td>
                  <td className={styles.mono}>{p.issuer}</td>
                  <td className={styles.mono}>{p.clientId}</td>
                  <td>{p.domains.join(', ')}</td>
                  <td>
                    <Badge tone={p.enabled ? 'good' : undefined}>{p.enabled ? 'enabled' : 'disabled'}</Badge>
                  </td>
                  <td>
                    <div className={styles.actions}>
                      <button type="button" className={styles.small} disabled={action.pending} onClick={() => setEditing(p)}>
                        Edit
                      </button>
                      <button
                        type="button"
                        className={styles.small}
                        disabled={action.pending}
                        onClick={() => action.run(() => updateSsoProvider(p.id, asUpdate(p, !p.enabled)), `${p.name} ${p.enabled ? 'disabled' : 'enabled'}.`)}
                      >
                        {p.enabled ? 'Disable' : 'Enable'}
                      </button>
                      <button type="button" className={`${styles.small} ${styles.danger}`} disabled={action.pending} onClick={() => setRemoving(p)}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing ? <SsoProviderDialog provider={editing === 'new' ? null : editing} onClose={() => setEditing(null)} onSaved={(message) => action.run(async () => undefined, message)} /> : null}
      <Dialog
        open={removing !== null}
        onOpenChange={(o) => !o && setRemoving(null)}
        title="Delete this identity provider?"
        description={removing ? `"Continue with ${removing.name}" disappears from the sign-in popups. Accounts that signed in with it stay; they can set a password with Forgot Password.` : undefined}
      >
        <div className={styles.actions}>
          <button
            type="button"
            className={forms.submit}
            onClick={() => {
              if (removing) action.run(() => deleteSsoProvider(removing.id), `${removing.name} deleted.`);
              setRemoving(null);
            }}
          >
            Delete provider
          </button>
          <button type="button" className={forms.secondary} onClick={() => setRemoving(null)}>
            Cancel
          </button>
        </div>
      </Dialog>
    </Panel>
  );
}
