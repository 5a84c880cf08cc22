import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { adminAuditQuery } from '../../api/admin';
import { formatDate, Panel, SearchForm } from './parts';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

const json = (v: unknown) => (v === null || v === undefined ? '—' : JSON.stringify(v, null, 1));

/** The audit log: every operator action with who, what, when, and the target before and after. Append-only. */
export default function Audit() {
  const [q, setQ] = useState('');
  const result = useInfiniteQuery(adminAuditQuery(q));
  return (
    <Panel
      title="Audit log"
      hint="Every console action, newest first. The server only ever appends to it."
      filters={<SearchForm label="Operator, action or target" placeholder="e-mail, hours.adjust or an id" onSearch={setQ} />}
    >
      <KeysetTable
        result={result}
        what="audit log"
        empty={q ? `No entry matches “${q}”.` : 'No operator actions yet.'}
        caption="Audit log"
        columns={['When', 'Operator', 'Action', 'Target', 'Before', 'After']}
        row={(e) => (
          <tr key={e.id}>
            <td>{formatDate(e.at)}</td>
            <td>{e.actor.email}</td>
            <td className={styles.mono}>{e.action}</td>
            <td>
              {e.targetType}
              <span className={`${styles.sub} ${styles.mono}`}>{e.targetId}</span>
            </td>
            <td>
              <pre className={styles.json}>{json(e.before)}</pre>
            </td>
            <td>
              <pre className={styles.json}>{json(e.after)}</pre>
            </td>
          </tr>
        )}
      />
    </Panel>
  );
}
