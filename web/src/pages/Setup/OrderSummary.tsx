import type { ReactNode } from 'react';
import { countryById, PLATFORMS, type PlatformName } from '@hyperdesk/contract';
import { Spinner } from '../../components/Spinner';
import { formatDateRange, formatMoneyIn } from '../../lib/format';
import { specRows } from './PlatformStep';
import styles from './OrderSummary.module.css';
import { CountryName } from '../../lib/Flag';

export interface OrderSummaryProps {
  title: string;
  country?: string | null;
  platform?: PlatformName | null;
  /** Show the platform's spec rows even before a platform is known (result pages list them always). */
  alwaysSpecs?: boolean;
  course?: { studentsCount: number; startDate: number; endDate: number } | null;
  hours?: number | null;
  total?: number | null;
  /** Values still loading show a spinner in their place. */
  loading?: boolean;
  /** Text when nothing is chosen yet. */
  empty?: string;
  footer?: ReactNode;
}

/** The order sidebar of the setup page and the payment result pages. */
export function OrderSummary(p: OrderSummaryProps) {
  const country = p.country ? countryById(p.country) : undefined;
  const platform = PLATFORMS.find((x) => x.name === p.platform) ?? (p.alwaysSpecs ? PLATFORMS[0] : undefined);
  const rows: Array<[string, ReactNode]> = [];
  if (country) rows.push(['Country', <CountryName key="c" country={country.id} label={country.label} />]);
  if (platform) {
    if (p.platform) rows.push(['Platform', platform.name]);
    for (const [k, v] of specRows(platform)) rows.push([k, v]);
  }
  if (p.course) {
    rows.push(['Concurrent Students', String(p.course.studentsCount)]);
    // In the course's country's time zone, as everywhere else (contract/src/dates.ts).
    rows.push(['Course Dates', formatDateRange(p.course.startDate, p.course.endDate, p.country ?? '')]);
  }
  if (p.hours != null) rows.push(['Runtime', `${p.hours} hours`]);
  else if (p.loading) rows.push(['Runtime', <Spinner key="s" small label="Loading runtime" />]);
  const showTotal = p.total != null && country;

  return (
    <section className={styles.box} aria-labelledby="order-summary-title">
      <h2 id="order-summary-title" className={styles.title}>
        {p.title}
      </h2>
      {rows.length === 0 && !p.loading ? (
        <p className={styles.empty}>{p.empty}</p>
      ) : (
        <dl className={styles.rows}>
          {rows.map(([k, v]) => (
            <div key={k} className={styles.row}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      )}
      {showTotal ? (
        <div className={styles.total}>
          <span>Total</span>
          <strong>{formatMoneyIn(p.total!, country.id)}</strong>
        </div>
      ) : null}
      {p.footer}
    </section>
  );
}
