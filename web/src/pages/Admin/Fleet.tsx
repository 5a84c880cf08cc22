import { useState } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { FleetState, type AdminMachine, type MachineAction, type StopKind } from '@hyperdesk/contract';
import { adminFleetQuery, runMachineAction } from '../../api/admin';
import { ActionStatus, MachineCell, Badge, formatDate, formatMinutes, FilterSelect, Panel, SearchForm } from './parts';
import { useAdminAction } from './useAction';
import { KeysetTable } from './KeysetTable';
import FleetHosts from './FleetHosts';
import styles from './Admin.module.css';

const STATE_LABEL: Record<FleetState, string> = {
  all: 'All machines',
  online: 'Online',
  processing: 'Starting',
  offline: 'Offline',
  running: 'Desired: running',
  stopped: 'Desired: stopped',
};
const TONE = { online: 'good', processing: 'warn', offline: undefined } as const;
const STOPPED_BY: Record<StopKind, string> = {
  user: 'Stopped by its user',
  instructor: 'Stopped by the instructor',
  idle: 'Idle: nobody used it',
  hours: 'Hours used up or expired',
  'course-end': 'The course ended',
  operator: 'Stopped by an operator',
  failure: 'Failed to start',
  timetable: 'The class ended (timetable)',
  'host-lost': 'Its host went offline',
};

/** Who or what stopped the machine last, when, and the text its user was shown (if any). */
function LastStop({ m }: { m: AdminMachine }) {
  if (!m.lastStop) return <td>never stopped</td>;
  return (
    <td>
      {STOPPED_BY[m.lastStop.by]}
      <span className={styles.sub}>{formatDate(m.lastStop.at)}</span>
      {m.stopReason ? <span className={styles.sub}>“{m.stopReason}”</span> : null}
    </td>
  );
}

/** Fleet: every machine, its desired and observed state, hours left; start, stop, force stop. Refreshes every 5 s. */
export default function Fleet() {
  const [q, setQ] = useState('');
  const [state, setState] = useState<FleetState>('all');
  const result = useInfiniteQuery(adminFleetQuery(q, state));
  const action = useAdminAction();
  const act = (m: AdminMachine, a: MachineAction) => action.run(() => runMachineAction(m.id, a), `${m.name}: ${a === 'start' ? 'start requested' : a === 'stop' ? 'stop requested' : 'force stop requested'}.`);

  return (
    <>
    <FleetHosts />
    <Panel
      title="Fleet"
      hint="Actions set the desired state; the reconciler converges the machine. Updates every 5 seconds."
      filters={
        <SearchForm label="Owner, instructor or machine" placeholder="e-mail, name or id" onSearch={setQ}>
          <FilterSelect label="State" schema={FleetState} value={state} labels={(s) => STATE_LABEL[s]} onChange={setState} />
        </SearchForm>
      }
    >
      <ActionStatus message={action.message} error={action.error} />
      <KeysetTable
        result={result}
        what="machines"
        empty="No machine matches these filters."
        caption="Machines"
        columns={['Machine', 'Owner or course', 'State', { label: 'Hours left', num: true }, 'Provider', 'Online since', 'Last stop', 'Actions']}
        row={(m) => (
          <tr key={m.id}>
            <MachineCell name={m.name} id={m.id} />
            <td>
              {m.owner ? m.owner.email : m.course ? m.course.name : '—'}
              {m.course?.instructorEmail ? <span className={styles.sub}>instructor {m.course.instructorEmail}</span> : null}
            </td>
            <td>
              <Badge tone={TONE[m.observed]}>{m.observed}</Badge>
              <span className={styles.sub}>wants {m.desired}</span>
            </td>
            <td className={styles.num}>{formatMinutes(m.minutesLeft)}</td>
            <td>{m.provider ?? '—'}</td>
            <td>{formatDate(m.onlineSince)}</td>
            <LastStop m={m} />
            <td>
              <div className={styles.actions}>
                <button type="button" className={styles.small} disabled={action.pending || m.desired === 'running' || m.minutesLeft <= 0} onClick={() => act(m, 'start')}>
                  Start
                </button>
                <button type="button" className={styles.small} disabled={action.pending || m.desired === 'stopped'} onClick={() => act(m, 'stop')}>
                  Stop
                </button>
                {/* Off for a machine that is offline and meant to stay so: there is nothing to stop. */}
                <button type="button" className={`${styles.small} ${styles.danger}`} disabled={action.pending || (m.desired === 'stopped' && m.observed === 'offline')} onClick={() => act(m, 'force-stop')}>
                  Force stop
                </button>
              </div>
            </td>
          </tr>
        )}
      />
    </Panel>
    </>
  );
}
