import { useState } from 'react';
import type { RosterStudent } from '@hyperdesk/contract';
import { formatDate } from '../../lib/format';
import { ConfirmDialog } from './ConfirmDialog';
import styles from './Course.module.css';

const STATE_LABELS: Record<RosterStudent['state'], string> = {
  invited: 'Invited',
  verified: 'Verified',
  joined: 'Joined',
  connected: 'Connected now',
};

/** What the state cell says under its label: when the invitation went out, or why the student cannot use it yet. */
function stateNote(s: RosterStudent, region: string): string | null {
  if (s.state !== 'invited') return null;
  if (s.signedUp) return 'Signed up, address not verified';
  return s.invitedAt ? `Invitation sent ${formatDate(s.invitedAt, region)}` : 'Not invited yet';
}

interface Props {
  students: readonly RosterStudent[];
  region: string;
  /** An action on one address is under way: its buttons wait. */
  busyEmail: string | null;
  onResend(email: string): void;
  onRemove(email: string): void;
}

/**
 * Each address on a course's list with its state (invited, verified, joined, connected now) and the machine it sits
 * at, with Resend (for addresses not verified yet) and Remove (asks first: a connected student loses their machine).
 */
export function RosterTable({ students, region, busyEmail, onResend, onRemove }: Props) {
  const [removing, setRemoving] = useState<RosterStudent | null>(null);
  return (
    <>
      <div className={`${styles.tableWrap} ${styles.stacked} ${styles.rosterWrap}`}>
        <table className={styles.table}>
          <thead>
            <tr>
              <th scope="col">Student</th>
              <th scope="col">Status</th>
              <th scope="col">Machine</th>
              <th scope="col">
                <span className={styles.visuallyHidden}>Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {students.map((s) => {
              const note = stateNote(s, region);
              const busy = busyEmail === s.email;
              return (
                <tr key={s.email}>
                  <th scope="row" className={styles.student}>
                    {s.email}
                  </th>
                  <td>
                    <span className={styles.rosterState} data-state={s.state}>
                      {STATE_LABELS[s.state]}
                    </span>
                    {note ? <span className={styles.rosterNote}>{note}</span> : null}
                  </td>
                  <td className={s.seat ? styles.machineCell : styles.free}>{s.seat ?? '—'}</td>
                  <td className={styles.rosterActions}>
                    {s.state === 'invited' ? (
                      <button type="button" className={styles.smallButton} disabled={busy} aria-label={`Resend invitation to ${s.email}`} onClick={() => onResend(s.email)}>
                        Resend
                      </button>
                    ) : null}
                    <button type="button" className={styles.smallButton} disabled={busy} aria-label={`Remove ${s.email}`} onClick={() => setRemoving(s)}>
                      Remove
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ConfirmDialog
        open={removing !== null}
        onOpenChange={(open) => {
          if (!open) setRemoving(null);
        }}
        title="Remove student?"
        description={
          removing?.state === 'connected'
            ? `${removing.email} is connected now: removing them ends their session and frees ${removing.seat ?? 'their machine'}.`
            : `${removing?.email ?? ''} will no longer see this course.`
        }
        confirmLabel="Remove"
        onConfirm={() => {
          if (removing) onRemove(removing.email);
        }}
      />
    </>
  );
}
