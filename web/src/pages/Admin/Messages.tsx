import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { MessageSourceFilter, type MessageDelivery } from '@hyperdesk/contract';
import { adminMessagesQuery } from '../../api/admin';
import { Badge, formatDate, FilterSelect, Panel, SearchForm } from './parts';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

const DELIVERY: Record<MessageDelivery, { label: string; tone?: 'good' | 'warn' | 'bad' }> = {
  outbox: { label: 'in the outbox', tone: 'good' },
  sent: { label: 'mailed', tone: 'good' },
  pending: { label: 'waiting to send', tone: 'warn' },
  failed: { label: 'delivery failed', tone: 'bad' },
  unknown: { label: 'no mail record' },
};

const SOURCE_LABEL: Record<MessageSourceFilter, string> = { all: 'Both forms', contact: 'Contact Us', support: 'Contact Support' };

/** Contact Us and Contact Support messages, with the delivery state of their e-mail. */
export default function Messages() {
  const [q, setQ] = useState('');
  const [source, setSource] = useState<MessageSourceFilter>('all');
  const result = useInfiniteQuery(adminMessagesQuery(q, source));
  return (
    <Panel
      title="Messages"
      hint="What visitors sent through Contact Us and Contact Support, and whether its e-mail went out."
      filters={
        <SearchForm label="Sender or text" placeholder="e-mail, name or words" onSearch={setQ}>
          <FilterSelect label="Form" schema={MessageSourceFilter} value={source} labels={(s) => SOURCE_LABEL[s]} onChange={setSource} />
        </SearchForm>
      }
    >
      <KeysetTable
        result={result}
        what="messages"
        empty="No messages match these filters."
        caption="Messages"
        columns={['Received', 'From', 'Form', 'Message', 'Status']}
        row={(m) => (
          <tr key={m.id}>
            <td>{formatDate(m.createdAt)}</td>
            <td>
              {m.name}
              <span className={styles.sub}>{m.email}</span>
              {m.signedIn ? <span className={styles.sub}>signed in</span> : null}
            </td>
            <td>
              {m.source === 'support' ? 'Contact Support' : 'Contact Us'}
              <span className={styles.sub}>to {m.recipient}</span>
            </td>
            <td className={styles.query}>{m.query}</td>
            <td>
              <Badge tone={DELIVERY[m.delivery].tone}>{DELIVERY[m.delivery].label}</Badge>
              {m.attempts ? <span className={styles.sub}>{m.attempts} attempt{m.attempts === 1 ? '' : 's'}</span> : null}
              {m.lastError ? <span className={styles.sub}>{m.lastError}</span> : null}
            </td>
          </tr>
        )}
      />
    </Panel>
  );
}
