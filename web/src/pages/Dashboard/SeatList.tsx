import type { InstanceStatus } from '@hyperdesk/contract';
import { StatusBadge } from './StatusBadge';
import styles from './Course.module.css';

export interface SeatView {
  machineName: string;
  instanceStatus: InstanceStatus;
  student: string | null;
}

/** Per-seat state of a course (issue 7): each machine, its status and the student connected to it. */
export function SeatList({ seats, title }: { seats: readonly SeatView[]; title: string }) {
  const inUse = seats.filter((s) => s.student).length;
  return (
    <section className={styles.block} aria-label={title}>
      <div className={styles.blockHead}>
        <h3 className={styles.blockTitle}>Machines</h3>
        <span className={styles.muted}>
          {inUse} of {seats.length} in use
        </span>
      </div>
      {seats.length === 0 ? (
        <p className={styles.muted}>The machines of this course are being prepared.</p>
      ) : (
        <div className={styles.tableWrap}>
          <table className={styles.table}>
            <thead>
              <tr>
                <th scope="col">Machine</th>
                <th scope="col">Status</th>
                <th scope="col">Student</th>
              </tr>
            </thead>
            <tbody>
              {seats.map((s) => (
                <tr key={s.machineName}>
                  <th scope="row" className={styles.machineCell}>
                    {s.machineName}
                  </th>
                  <td>
                    <StatusBadge status={s.instanceStatus} />
                  </td>
                  <td className={s.student ? styles.student : styles.free}>{s.student ?? 'Free'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
