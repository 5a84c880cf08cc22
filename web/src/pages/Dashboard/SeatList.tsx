import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { InstanceStatus } from '@hyperdesk/contract';
import { endSeatSession } from '../../api/courses';
import { balanceKey } from '../../api/wallet';
import { ConfirmDialog } from './ConfirmDialog';
import { ResetMachineDialog } from './ResetMachineDialog';
import { StatusBadge } from './StatusBadge';
import styles from './Course.module.css';

export interface SeatView {
  machineId: string;
  machineName: string;
  instanceStatus: InstanceStatus;
  student: string | null;
}

interface Props {
  /** The course. */
  packId: string;
  seats: readonly SeatView[];
  title: string;
}

/**
 * Per-seat state of a course (issue 7): each machine, its status and the student connected to it, with End session
 * (asks first; the student's tab says the instructor ended it) and Reset (a fresh desktop, the home kept unless asked).
 */
export function SeatList({ packId, seats, title }: Props) {
  const qc = useQueryClient();
  const [ending, setEnding] = useState<SeatView | null>(null);
  const [resetting, setResetting] = useState<SeatView | null>(null);
  const end = useMutation({
    mutationFn: (seat: SeatView) => endSeatSession(packId, seat.machineId),
    onSettled: () => qc.invalidateQueries({ queryKey: balanceKey }),
  });
  const inUse = seats.filter((s) => s.student).length;
  return (
    <section className={styles.block} aria-label={title}>
      <div className={styles.blockHead}>
        <h3 className={styles.blockTitle}>Machines</h3>
        <span className={styles.muted}>
          {inUse} of {seats.length} in use
        </span>
      </div>
      {end.isError ? (
        <p role="alert" className={styles.muted}>
          {end.error.message}
        </p>
      ) : null}
      {seats.length === 0 ? (
        <p className={styles.muted}>The machines of this course are being prepared.</p>
      ) : (
        <div className={`${styles.tableWrap} ${styles.stacked} ${styles.seats}`}>
          <table className={styles.table}>
            <thead>
              <tr>
                <th scope="col">Machine</th>
                <th scope="col">Status</th>
                <th scope="col">Student</th>
                <th scope="col">
                  <span className={styles.visuallyHidden}>Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {seats.map((s) => (
                <tr key={s.machineId}>
                  <th scope="row" className={styles.machineCell}>
                    {s.machineName}
                  </th>
                  <td>
                    <StatusBadge status={s.instanceStatus} />
                  </td>
                  <td className={s.student ? styles.student : styles.free}>{s.student ?? 'Free'}</td>
                  <td className={styles.rosterActions}>
                    {s.student ? (
                      <button
                        type="button"
                        className={styles.smallButton}
                        disabled={end.isPending && end.variables?.machineId === s.machineId}
                        aria-label={`End the session of ${s.student}`}
                        onClick={() => setEnding(s)}
                      >
                        End session
                      </button>
                    ) : null}
                    <button type="button" className={styles.smallButton} aria-label={`Reset ${s.machineName}`} onClick={() => setResetting(s)}>
                      Reset
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ConfirmDialog
        open={ending !== null}
        onOpenChange={(open) => {
          if (!open) setEnding(null);
        }}
        title="End this session?"
        description={`${ending?.student ?? ''} is disconnected from ${ending?.machineName ?? 'the machine'} and told that you ended the session. The machine keeps running; anything not saved may be lost if another student takes it.`}
        confirmLabel="End session"
        onConfirm={() => {
          if (ending) end.mutate(ending);
        }}
      />
      <ResetMachineDialog
        packId={resetting?.machineId ?? ''}
        machineName={resetting?.machineName ?? ''}
        homeOwner={resetting?.student ?? 'the last student'}
        open={resetting !== null}
        onOpenChange={(open) => {
          if (!open) setResetting(null);
        }}
      />
    </section>
  );
}
