import { useState, type FormEvent } from 'react';
import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import type { AuditActor } from '@hyperdesk/contract';
import { adminAuditQuery, downloadAuditCsv, type AuditFilters } from '../../api/admin';
import { ActionStatus, Badge, formatDate, Panel } from './parts';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';
import { saveFile } from '../../lib/save-file';

const json = (v: unknown) => (v === null || v === undefined ? '—' : JSON.stringify(v, null, 1));

/**
 * The actions the console and the CLI write, offered as prefixes in the Action filter; `user.totp` also lists every
 * user's own two-factor changes (turned on or off, a recovery code spent), `auth.sign-in` operators' sign-ins.
 */
const ACTIONS = [
  'user.claim', 'user.create-admin', 'user.disable', 'user.enable', 'user.revoke-sessions', 'user.password-reset',
  'user.totp', 'user.totp.reset', 'user.totp.enable', 'user.totp.disable', 'user.totp.recovery-code.use', 'auth.sign-in',
  'machine.start', 'machine.stop', 'machine.force-stop', 'order.fulfil', 'hours.adjust', 'mail.resend',
];

function Actor({ actor }: { actor: AuditActor }) {
  if (actor.kind === 'cli') {
    return (
      <td>
        <Badge>CLI</Badge>
        <span className={styles.sub}>OS user {actor.osUser}</span>
      </td>
    );
  }
  if (actor.kind === 'account') {
    return (
      <td>
        {actor.email}
        <span className={styles.sub}>own account</span>
      </td>
    );
  }
  return <td>{actor.email}</td>;
}

/** The three filters, applied together on submit (Enter or the button). */
function AuditFilterForm({ onApply }: { onApply(f: AuditFilters): void }) {
  const [f, setF] = useState<Required<AuditFilters>>({ actor: '', action: '', target: '' });
  const field = (name: keyof AuditFilters, label: string, placeholder: string, list?: string) => (
    <label className={styles.narrow}>
      {label}
      <input type="search" value={f[name]} placeholder={placeholder} maxLength={200} list={list} onChange={(e) => setF({ ...f, [name]: e.target.value })} />
    </label>
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply({ actor: f.actor.trim(), action: f.action.trim(), target: f.target.trim() });
  };
  return (
    <form className={styles.filters} role="search" aria-label="Filter the audit log" onSubmit={submit}>
      {field('actor', 'Actor', 'e-mail, cli or cli:root')}
      {field('action', 'Action', 'e.g. user.claim', 'audit-actions')}
      {field('target', 'Target', 'an id or a user’s e-mail')}
      <datalist id="audit-actions">
        {ACTIONS.map((a) => (
          <option key={a} value={a} />
        ))}
      </datalist>
      <button type="submit" className={styles.small} style={{ minHeight: 40 }}>
        Filter
      </button>
    </form>
  );
}

/**
 * The audit log: every console and CLI action with who (an operator's e-mail, or the CLI and its OS user), what,
 * when, the target and its state before and after. Append-only. Filters by actor, action and target; the CSV
 * export holds every entry matching the filters.
 */
export default function Audit() {
  const [filters, setFilters] = useState<AuditFilters>({});
  const result = useInfiniteQuery(adminAuditQuery(filters));
  const exporting = useMutation({
    mutationFn: () => downloadAuditCsv(filters),
    onSuccess: ({ blob, filename }) => saveFile(blob, filename),
  });
  const filtered = Object.values(filters).some(Boolean);
  return (
    <Panel
      title="Audit log"
      hint="Every console and CLI action, operators' sign-ins and every user's two-factor changes, newest first. The server only ever appends to it."
      filters={<AuditFilterForm onApply={setFilters} />}
    >
      <div className={styles.toolbar}>
        <button type="button" className={styles.small} disabled={exporting.isPending} onClick={() => exporting.mutate()}>
          {exporting.isPending ? 'Exporting…' : filtered ? 'Export these entries (CSV)' : 'Export all (CSV)'}
        </button>
      </div>
      <ActionStatus message={exporting.isSuccess ? `Saved ${exporting.data.filename}.` : null} error={exporting.isError ? `The export failed: ${exporting.error.message}` : null} />
      <KeysetTable
        result={result}
        what="audit log"
        empty={filtered ? 'No entry matches these filters.' : 'No operator actions yet.'}
        caption="Audit log"
        columns={['When', 'Actor', 'Action', 'Target', 'Before', 'After']}
        row={(e) => (
          <tr key={e.id}>
            <td>{formatDate(e.at)}</td>
            <Actor actor={e.actor} />
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
