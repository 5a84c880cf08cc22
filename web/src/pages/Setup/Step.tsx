import { useEffect, useRef, type ReactNode } from 'react';
import styles from './Setup.module.css';

export type StepStatus = 'locked' | 'open' | 'done';

interface Props {
  number: number;
  title: string;
  status: StepStatus;
  /** What was confirmed, shown with the Change link once the step is done. */
  summary?: ReactNode;
  onChange?(): void;
  /** Move the keyboard focus to this step when it opens (not on the page's first render). */
  focusOnOpen?: boolean;
  children?: ReactNode;
}

/** One numbered setup step: greyed until reached, its form while open, its choice and 'Change' once confirmed. */
export function Step({ number, title, status, summary, onChange, focusOnOpen, children }: Props) {
  const headingId = `setup-step-${number}`;
  const headingRef = useRef<HTMLHeadingElement>(null);
  // Confirm and Change buttons disappear when pressed; the step that opens takes the focus instead of the page.
  useEffect(() => {
    if (status === 'open' && focusOnOpen) headingRef.current?.focus();
  }, [status, focusOnOpen]);
  return (
    <section className={`${styles.step} ${styles[status]}`} aria-labelledby={headingId} aria-current={status === 'open' ? 'step' : undefined}>
      <div className={styles.stepHead}>
        <span className={styles.stepNumber} aria-hidden="true">
          {status === 'done' ? (
            <svg viewBox="0 0 16 16" width="14" height="14" focusable="false">
              <path d="M3 8.5l3 3 7-7" fill="none" stroke="currentColor" strokeWidth="2.2" strokeLinecap="round" strokeLinejoin="round" />
            </svg>
          ) : (
            number
          )}
        </span>
        <h2 id={headingId} ref={headingRef} tabIndex={-1} className={styles.stepTitle}>
          <span className="sr-only">Step {number}: </span>
          {title}
        </h2>
        {status === 'done' && onChange ? (
          <button type="button" className={styles.changeLink} onClick={onChange} aria-label={`Change ${title}`}>
            Change
          </button>
        ) : null}
      </div>
      {status === 'done' && summary ? <div className={styles.stepSummary}>{summary}</div> : null}
      {status === 'open' ? <div className={styles.stepBody}>{children}</div> : null}
    </section>
  );
}

export function FieldError({ id, children }: { id: string; children: ReactNode }) {
  return (
    <p id={id} className={styles.error} role="alert">
      {children}
    </p>
  );
}
