import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { formatClassTime, formatCourseTime } from '@hyperdesk/contract';
import { nextClassesQuery } from '../../api/timetable';
import styles from './Timetable.module.css';

/** Re-renders when `at` (epoch ms) passes, so "Next class" turns into "Class now" and then moves on. */
function useNow(at: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (at === null || at <= now) return;
    const t = setTimeout(() => setNow(Date.now()), Math.min(at - now + 50, 2 ** 31 - 1));
    return () => clearTimeout(t);
  }, [at, now]);
  return now;
}

/**
 * "Next class: Wed 25 Nov '26, 09:00–10:50" on a course's card (students and the instructor), in the course's
 * country's time zone; "Class now, until 10:50" while it runs. Nothing without a class ahead (or while loading).
 */
export function NextClass({ packId, region }: { packId: string; region: string }) {
  const classes = useQuery(nextClassesQuery());
  const next = classes.data?.find((c) => c.packId === packId);
  const startAt = next ? Date.parse(next.startAt) : null;
  const endAt = next ? Date.parse(next.endAt) : null;
  const now = useNow(startAt !== null && startAt > Date.now() ? startAt : endAt);
  useEffect(() => {
    if (endAt !== null && now >= endAt) void classes.refetch();
  }, [now, endAt, classes]);
  if (!next || endAt === null || startAt === null || now >= endAt) return null;
  const running = now >= startAt;
  return (
    <p className={styles.nextClass} data-testid="next-class">
      <span className={styles.nextIcon} aria-hidden="true" />
      <span>
        {running ? (
          <>
            <strong>Class now</strong>, until {formatCourseTime(next.endAt, region)}
          </>
        ) : (
          <>
            Next class: <strong>{formatClassTime(next.startAt, next.endAt, region)}</strong>
          </>
        )}
      </span>
    </p>
  );
}
