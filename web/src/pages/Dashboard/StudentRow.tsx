import { formatDateRange } from '../../lib/format';
import { ConnectButton } from './ConnectButton';
import { MachineCard } from './MachineCard';
import { NextClass } from './NextClass';
import type { MachineRowProps } from './rows';
import styles from './Course.module.css';

export const WAIT_FOR_INSTRUCTOR = 'Please wait for your Instructor to start the machine';

/**
 * A course the student's e-mail is on (spec §6): Connect only, disabled while the course's machines are offline or
 * processing. Connect opens the connect tab; the server gives the student a seat (the same machine where free).
 */
export function StudentRow({ entry }: MachineRowProps) {
  const waiting = entry.instanceStatus !== 'online';
  return (
    <MachineCard entry={entry} actions={<ConnectButton entry={entry} disabledReason={waiting ? WAIT_FOR_INSTRUCTOR : null} />}>
      <NextClass packId={entry.packId} region={entry.region} />
      {entry.startDate && entry.endDate ? (
        <p className={styles.courseDates}>
          <span className={styles.muted}>Course Dates</span> <strong>{formatDateRange(entry.startDate, entry.endDate, entry.region)}</strong>
        </p>
      ) : null}
    </MachineCard>
  );
}
