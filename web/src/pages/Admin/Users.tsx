import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import type { AdminUser, UserAction } from '@hyperdesk/contract';
import { adminUsersQuery, runUserAction, setUserClaim } from '../../api/admin';
import { useAuth } from '../../auth/AuthProvider';
import { Dialog } from '../../components/Dialog';
import forms from '../../components/forms.module.css';
import { ActionStatus, Badge, formatDate, Panel, SearchForm } from './parts';
import { useAdminAction } from './useAction';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

const DONE: Record<UserAction, string> = {
  disable: 'disabled: sessions ended, machines stopping',
  enable: 'enabled again',
  'revoke-sessions': 'signed out everywhere',
  'password-reset': 'sent a password reset e-mail',
  'reset-2fa': 'two-factor sign-in reset: authenticator and recovery codes removed, sessions ended',
};

/** The actions that ask first, with the dialog's title, text and button. */
type Confirmed = 'disable' | 'reset-2fa';
const CONFIRM: Record<Confirmed, { title: string; text: (u: AdminUser) => string; button: string }> = {
  disable: {
    title: 'Disable this account?',
    text: (u) => `${u.email} will be signed out everywhere, their machines will stop and they cannot sign in until enabled again.`,
    button: 'Disable account',
  },
  'reset-2fa': {
    title: 'Reset two-factor sign-in?',
    text: (u) =>
      `${u.email}'s authenticator and recovery codes are removed and they are signed out everywhere; they sign in with their password alone until they turn it on again` +
      (u.admin ? ' (the console stays closed to them until then).' : '.') +
      ' Do this only when you know it is them asking (a lost phone).',
    button: 'Reset two-factor sign-in',
  },
};

/** Users: search, claims, disable/enable, end sessions, password reset, reset two-factor sign-in. */
export default function Users() {
  const [q, setQ] = useState('');
  const result = useInfiniteQuery(adminUsersQuery(q));
  const action = useAdminAction();
  const { user: me } = useAuth();
  const [confirm, setConfirm] = useState<{ user: AdminUser; action: Confirmed } | null>(null);

  const act = (u: AdminUser, a: UserAction) => action.run(() => runUserAction(u.uid, a), `${u.email}: ${DONE[a]}.`);
  const claim = (u: AdminUser, c: 'instructor' | 'admin') =>
    action.run(() => setUserClaim(u.uid, c, !u[c]), `${u.email} ${u[c] ? 'no longer has' : 'now has'} the ${c} claim (from their next token refresh).`);

  return (
    <Panel
      title="Users"
      hint="Search by e-mail or name. Claims reach a user's session at their next token refresh (within 15 minutes)."
      filters={<SearchForm label="E-mail or name" placeholder="ada@example.com" onSearch={setQ} />}
    >
      <ActionStatus message={action.message} error={action.error} />
      <KeysetTable
        result={result}
        what="users"
        empty={q ? `No user matches “${q}”.` : 'No users yet.'}
        caption="Users"
        columns={['User', 'Claims', 'Status', { label: 'Sessions', num: true }, 'Created', 'Actions']}
        row={(u) => (
          <tr key={u.uid}>
            <td>
              {u.displayName}
              <span className={styles.sub}>{u.email}</span>
            </td>
            <td>
              <div className={styles.actions}>
                {u.instructor ? <Badge tone="good">instructor</Badge> : null}
                {u.admin ? <Badge tone="warn">admin</Badge> : null}
                {!u.instructor && !u.admin ? '—' : null}
              </div>
            </td>
            <td>
              {u.disabledAt ? <Badge tone="bad">disabled</Badge> : <Badge tone="good">active</Badge>}
              {!u.emailVerified ? <span className={styles.sub}>e-mail not verified</span> : null}
              {u.twoFactor ? <span className={styles.sub}>two-factor sign-in on</span> : null}
            </td>
            <td className={styles.num}>{u.activeSessions}</td>
            <td>{formatDate(u.createdAt)}</td>
            <td>
              <div className={styles.actions}>
                <button type="button" className={styles.small} disabled={action.pending} onClick={() => claim(u, 'instructor')}>
                  {u.instructor ? 'Revoke instructor' : 'Grant instructor'}
                </button>
                <button type="button" className={styles.small} disabled={action.pending || (u.uid === me?.uid && u.admin)} onClick={() => claim(u, 'admin')}>
                  {u.admin ? 'Revoke admin' : 'Grant admin'}
                </button>
                <button type="button" className={styles.small} disabled={action.pending} onClick={() => act(u, 'revoke-sessions')}>
                  End sessions
                </button>
                <button type="button" className={styles.small} disabled={action.pending} onClick={() => act(u, 'password-reset')}>
                  Send password reset
                </button>
                {u.twoFactor ? (
                  <button type="button" className={`${styles.small} ${styles.danger}`} disabled={action.pending || u.uid === me?.uid} onClick={() => setConfirm({ user: u, action: 'reset-2fa' })}>
                    Reset two-factor
                  </button>
                ) : null}
                {u.disabledAt ? (
                  <button type="button" className={styles.small} disabled={action.pending} onClick={() => act(u, 'enable')}>
                    Enable
                  </button>
                ) : (
                  <button type="button" className={`${styles.small} ${styles.danger}`} disabled={action.pending || u.uid === me?.uid} onClick={() => setConfirm({ user: u, action: 'disable' })}>
                    Disable
                  </button>
                )}
              </div>
            </td>
          </tr>
        )}
      />
      <Dialog
        open={confirm !== null}
        onOpenChange={(o) => !o && setConfirm(null)}
        title={confirm ? CONFIRM[confirm.action].title : ''}
        description={confirm ? CONFIRM[confirm.action].text(confirm.user) : undefined}
      >
        <div className={styles.actions}>
          <button
            type="button"
            className={forms.submit}
            onClick={() => {
              if (confirm) act(confirm.user, confirm.action);
              setConfirm(null);
            }}
          >
            {confirm ? CONFIRM[confirm.action].button : ''}
          </button>
          <button type="button" className={forms.secondary} onClick={() => setConfirm(null)}>
            Cancel
          </button>
        </div>
      </Dialog>
    </Panel>
  );
}
