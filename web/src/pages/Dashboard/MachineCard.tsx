import type { ReactNode } from 'react';
import { countryById, type BalanceEntry } from '@hyperdesk/contract';
import { formatHours } from '../../lib/format';
import { Countdown } from './Countdown';
import { HoursNotice } from './HoursNotice';
import { StatusBadge } from './StatusBadge';
import styles from './Dashboard.module.css';
import { CountryName } from '../../lib/Flag';

interface Props {
  entry: BalanceEntry;
  /** The role's buttons (Start/Connect/Stop, Start All/Stop All, Connect only). */
  actions?: ReactNode;
  /** Links under the title, e.g. Config Details. */
  links?: ReactNode;
  /** Why a start just failed (from the start call), shown like a stop reason. */
  failure?: string | null;
  /** Role-specific details under the card (static config, roster upload, seats). */
  children?: ReactNode;
}

/** The part every machine row shares: name, country, state, hours, start countdown and why it last stopped. */
export function MachineCard({ entry, actions, links, failure, children }: Props) {
  const country = countryById(entry.region);
  const headingId = `machine-${entry.packId}`;
  return (
    <article className={styles.machine} aria-labelledby={headingId}>
      <div className={styles.machineHead}>
        <div className={styles.machineInfo}>
          <h2 id={headingId} className={styles.machineName}>
            {entry.machineName}
          </h2>
          <p className={styles.machineMeta}>
            {country ? (
              <CountryName country={country.id} label={country.label} />
            ) : null}
            <span>{entry.platform}</span>
            <StatusBadge status={entry.instanceStatus} />
          </p>
          <p className={styles.hours}>
            <strong>{formatHours(entry.timeLeft)}</strong> of {formatHours(entry.totalHours)} hours left
          </p>
          <HoursNotice entry={entry} />
          {links ? <div className={styles.links}>{links}</div> : null}
        </div>
        {actions ? <div className={styles.machineActions}>{actions}</div> : null}
      </div>
      {entry.instanceStatus === 'processing' ? <Countdown key={entry.processingSince ?? 'none'} since={entry.processingSince} /> : null}
      {entry.instanceStatus === 'offline' && (failure || entry.stopReason) ? (
        <p className={styles.stopReason}>{failure || entry.stopReason}</p>
      ) : null}
      {children}
    </article>
  );
}
