import { useEffect } from 'react';
import type { BalanceEntry, Role } from '@hyperdesk/contract';
import { prefetchConnectPage } from '../../lib/prefetchConnect';
import { InstructorRow } from './InstructorRow';
import { MachineCard } from './MachineCard';
import type { MachineRow } from './rows';
import { SingleMachineRow } from './SingleMachineRow';
import { StudentRow } from './StudentRow';
import styles from './Dashboard.module.css';

/**
 * The row each role gets (spec §6). INSTRUCTOR (Start All / Stop All, static config, roster upload, seats) and
 * STUDENT (Connect only) rows plug in here; a role without a row shows the shared card without actions.
 */
const ROWS: Partial<Record<Role, MachineRow>> = {
  SINGLE: SingleMachineRow,
  INSTRUCTOR: InstructorRow,
  STUDENT: StudentRow,
};

/** Spec §6: in the balance list, instructor entries after the first are skipped. */
export function visibleEntries(entries: BalanceEntry[]): BalanceEntry[] {
  let instructorSeen = false;
  return entries.filter((e) => {
    if (e.role !== 'INSTRUCTOR') return true;
    if (instructorSeen) return false;
    instructorSeen = true;
    return true;
  });
}

export function MachineList({ entries }: { entries: BalanceEntry[] }) {
  // Whoever has a machine here may connect to it: the Connect page's files are fetched while this page is idle.
  useEffect(prefetchConnectPage, []);
  return (
    <ul className={styles.list}>
      {visibleEntries(entries).map((entry) => {
        const Row = ROWS[entry.role];
        return <li key={`${entry.role}:${entry.packId}`}>{Row ? <Row entry={entry} /> : <MachineCard entry={entry} />}</li>;
      })}
    </ul>
  );
}
