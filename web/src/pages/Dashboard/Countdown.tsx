import { useEffect, useState } from 'react';
import styles from './Dashboard.module.css';

const TOTAL_MINUTES = 5;
const STEP_MS = 60_000;

/** Minutes left of the 5-minute start promise, stepping down once a minute from `since` (spec §4, §9). */
export function minutesLeft(since: number, now: number): number {
  const elapsed = Math.max(0, now - since);
  return Math.max(0, TOTAL_MINUTES - Math.floor(elapsed / STEP_MS));
}

export function Countdown({ since }: { since: string | null }) {
  // Without a start time from the server, count from when this browser first saw the machine processing.
  const [seenAt] = useState(() => Date.now());
  const start = since ? Math.min(Date.parse(since) || seenAt, Date.now()) : seenAt;
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const wait = STEP_MS - ((Date.now() - start) % STEP_MS) + 20;
    const t = setTimeout(() => setNow(Date.now()), wait);
    return () => clearTimeout(t);
  }, [start, now]);

  const left = minutesLeft(start, now);
  return (
    <p className={styles.countdown} role="status" aria-live="polite">
      <span className={styles.countdownDot} aria-hidden="true" />
      {left > 0
        ? `Your machine will be ready in about ${left} ${left === 1 ? 'minute' : 'minutes'}`
        : 'Your machine is almost ready'}
    </p>
  );
}
