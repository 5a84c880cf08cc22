import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { BalanceEntry } from '@hyperdesk/contract';
import { hoursNoticesQuery } from '../../api/hours';
import { formatDate } from '../../lib/format';
import styles from './Dashboard.module.css';

/**
 * The card's hours forecast ("At this pace your hours run out on …") and its active alert as a banner (issue 22.4).
 * Students control no hours: they get neither (and no buying link); an instructor's course hours cannot be topped
 * up, so only a single user's banner links to buying more. Loading or a failed read shows nothing (the card stands).
 */
export function HoursNotice({ entry }: { entry: BalanceEntry }) {
  const enabled = entry.role !== 'STUDENT';
  const notices = useQuery({ ...hoursNoticesQuery(), enabled });
  const notice = enabled ? notices.data?.find((n) => n.packId === entry.packId) : undefined;
  if (!notice) return null;
  return (
    <>
      {notice.runOutAt ? (
        <p className={styles.forecast}>At this pace your hours run out on {formatDate(notice.runOutAt, entry.region)}</p>
      ) : null}
      {notice.alert ? (
        <p className={styles.hoursAlert} role="status">
          {notice.alert.text}
          {entry.role === 'SINGLE' ? (
            <>
              {' '}
              <Link to="/setup" className={styles.textLink}>
                Buy more hours
              </Link>
            </>
          ) : null}
        </p>
      ) : null}
    </>
  );
}
