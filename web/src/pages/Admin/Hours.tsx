import { useState, type FormEvent } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { ADJUST_MAX_MINUTES, type AdminMachine } from '@hyperdesk/contract';
import { adjustHours, adminAdjustmentsQuery, adminFleetQuery } from '../../api/admin';
import { Dialog } from '../../components/Dialog';
import forms from '../../components/forms.module.css';
import { ActionStatus, MachineCell, formatDate, formatMinutes, Panel, SearchForm } from './parts';
import { useAdminAction } from './useAction';
import { KeysetTable } from './KeysetTable';
import styles from './Admin.module.css';

/** Hours: find a machine, add or take minutes with a reason (a ledger `adjustment`); the recent adjustments below. */
export default function Hours() {
  const [q, setQ] = useState('');
  const machines = useInfiniteQuery({ ...adminFleetQuery(q, 'all'), enabled: q !== '', refetchInterval: false });
  const adjustments = useInfiniteQuery(adminAdjustmentsQuery(''));
  const action = useAdminAction();
  const [target, setTarget] = useState<AdminMachine | null>(null);

  return (
    <>
      <Panel
        title="Hours"
        hint="Adjustments are written to the ledger with your reason and show in the user's balance at once."
        filters={<SearchForm label="Find a machine" placeholder="owner e-mail, machine name or id" onSearch={setQ} />}
      >
        <ActionStatus message={action.message} error={action.error} />
        {q === '' ? (
          <p className={styles.state}>Search for the user or machine whose hours you want to adjust.</p>
        ) : (
          <KeysetTable
            result={machines}
            what="machines"
            empty={`No machine matches “${q}”.`}
            caption="Machines found"
            columns={['Machine', 'Owner or course', { label: 'Hours left', num: true }, 'Actions']}
            row={(m) => (
              <tr key={m.id}>
                <MachineCell name={m.name} id={m.id} />
                <td>{m.owner?.email ?? m.course?.name ?? '—'}</td>
                <td className={styles.num}>{formatMinutes(m.minutesLeft)}</td>
                <td>
                  <button type="button" className={styles.small} onClick={() => setTarget(m)}>
                    Adjust hours
                  </button>
                </td>
              </tr>
            )}
          />
        )}
      </Panel>
      <div style={{ height: 24 }} />
      <Panel title="Recent adjustments" hint="Every adjustment in the ledger, newest first.">
        <KeysetTable
          result={adjustments}
          what="adjustments"
          empty="No adjustments yet."
          caption="Recent adjustments"
          columns={['When', 'Machine', { label: 'Change', num: true }, 'Reason']}
          row={(a) => (
            <tr key={a.id}>
              <td>{formatDate(a.createdAt)}</td>
              <td>
                {a.machineName}
                <span className={styles.sub}>{a.ownerEmail ?? a.machineId}</span>
              </td>
              <td className={styles.num}>{a.minutes > 0 ? '+' : ''}{formatMinutes(a.minutes)}</td>
              <td>{a.reason}</td>
            </tr>
          )}
        />
      </Panel>
      {target ? (
        <AdjustDialog
          machine={target}
          onClose={() => setTarget(null)}
          onSubmit={(minutes, reason) => {
            action.run(() => adjustHours({ machineId: target.id, minutes, reason }), `${target.name}: ${minutes > 0 ? 'added' : 'took'} ${formatMinutes(Math.abs(minutes))}.`);
            setTarget(null);
          }}
        />
      ) : null}
    </>
  );
}

function AdjustDialog({ machine, onClose, onSubmit }: { machine: AdminMachine; onClose(): void; onSubmit(minutes: number, reason: string): void }) {
  const [minutes, setMinutes] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const m = Number(minutes);
    if (!Number.isInteger(m) || m === 0 || Math.abs(m) > ADJUST_MAX_MINUTES) return setError('Enter a whole number of minutes, not 0 (negative to take hours away).');
    if (-m > machine.minutesLeft) return setError(`Only ${formatMinutes(machine.minutesLeft)} are left to take.`);
    if (reason.trim().length < 3) return setError('A reason is required (at least 3 characters).');
    onSubmit(m, reason.trim());
  };
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title="Adjust hours" description={`${machine.name} · ${machine.owner?.email ?? machine.course?.name ?? ''} · ${formatMinutes(machine.minutesLeft)} left`}>
      <form className={styles.form} onSubmit={submit} noValidate>
        <label>
          Minutes (negative to take away)
          <input type="number" inputMode="numeric" step={1} value={minutes} onChange={(e) => setMinutes(e.target.value)} required />
        </label>
        <label>
          Reason
          <textarea rows={3} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} required />
        </label>
        {error ? <p className={`${styles.status} ${styles.statusError}`} role="alert">{error}</p> : null}
        <div className={styles.actions}>
          <button type="submit" className={forms.submit}>
            Save adjustment
          </button>
          <button type="button" className={forms.secondary} onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
