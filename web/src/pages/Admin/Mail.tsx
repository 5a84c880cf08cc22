import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { MailStateFilter, type AdminMail, type MailState } from '@hyperdesk/contract';
import { adminMailQuery, resendMail } from '../../api/admin';
import { ActionStatus, Badge, formatDate, FilterSelect, Panel, SearchForm } from './parts';
import { useAdminAction } from './useAction';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

const STATE: Record<MailState, { label: string; tone?: 'good' | 'warn' | 'bad' }> = {
  queued: { label: 'queued', tone: 'warn' },
  sent: { label: 'sent', tone: 'good' },
  failed: { label: 'failed', tone: 'bad' },
  outbox: { label: 'in the outbox' },
};
const FILTER_LABEL: Record<MailStateFilter, string> = { all: 'All mail', queued: 'Queued', sent: 'Sent', failed: 'Failed', outbox: 'In the outbox' };

/** A message waiting for its first try goes out within seconds: nothing to resend yet. */
const canResend = (m: AdminMail) => !(m.state === 'queued' && m.attempts === 0);

function State({ m }: { m: AdminMail }) {
  const retrying = m.state === 'queued' && m.lastError;
  return (
    <td>
      <Badge tone={retrying ? 'bad' : STATE[m.state].tone}>{retrying ? 'retrying' : STATE[m.state].label}</Badge>
      {m.lastError ? <span className={styles.sub}>{m.state === 'failed' ? 'Reason' : 'Last try'}: {m.lastError}</span> : null}
      {m.attempts ? <span className={styles.sub}>{m.attempts} {m.attempts === 1 ? 'try' : 'tries'}{m.nextAttemptAt ? `, next ${formatDate(m.nextAttemptAt)}` : ''}</span> : null}
      {m.resends ? <span className={styles.sub}>resent {m.resends}×, last {formatDate(m.resentAt)}</span> : null}
    </td>
  );
}

/**
 * Outgoing mail (mail_outbox): each message's recipient, kind, state (queued, sent, failed with the reason, or kept
 * in the outbox when no SMTP relay is configured), times and the links in its text; Resend queues it again
 * (audited). Refreshes every 10 s while shown.
 */
export default function Mail() {
  const [q, setQ] = useState('');
  const [state, setState] = useState<MailStateFilter>('all');
  const result = useInfiniteQuery(adminMailQuery(q, state));
  const action = useAdminAction();
  const resend = (m: AdminMail) => action.run(() => resendMail(m.id), `Mail to ${m.to} queued again.`);

  return (
    <Panel
      title="Outgoing mail"
      hint="Every message the product sends, newest first. Links are shown so you can hand one over another way; they are as secret as the mail."
      filters={
        <SearchForm label="Recipient, kind or id" placeholder="e-mail, password-reset or an id" onSearch={setQ}>
          <FilterSelect label="State" schema={MailStateFilter} value={state} labels={(s) => FILTER_LABEL[s]} onChange={setState} />
        </SearchForm>
      }
    >
      <ActionStatus message={action.message} error={action.error} />
      <KeysetTable
        result={result}
        what="mail"
        empty="No mail matches these filters."
        caption="Outgoing mail"
        columns={['Created', 'To', 'Kind', 'State', 'Sent', 'Links', 'Actions']}
        row={(m) => (
          <tr key={m.id}>
            <td>
              {formatDate(m.createdAt)}
              <span className={`${styles.sub} ${styles.mono}`}>{m.id}</span>
            </td>
            <td>{m.to}</td>
            <td>
              <span className={styles.mono}>{m.kind}</span>
              <span className={styles.sub}>{m.subject}</span>
            </td>
            <State m={m} />
            <td>{m.sentAt ? formatDate(m.sentAt) : m.failedAt ? `gave up ${formatDate(m.failedAt)}` : '—'}</td>
            <td>
              {m.links.length ? (
                <ul className={styles.links} aria-label="Links in the mail">
                  {m.links.map((l) => (
                    <li key={l} className={styles.mono}>{l}</li>
                  ))}
                </ul>
              ) : (
                '—'
              )}
            </td>
            <td>
              <button type="button" className={styles.small} disabled={action.pending || !canResend(m)} onClick={() => resend(m)}>
                Resend
              </button>
            </td>
          </tr>
        )}
      />
    </Panel>
  );
}
