import { useId, useMemo, useState, type FormEvent } from 'react';
import { WEEKDAYS, type ClassSession, type ClassSessionFields, type Weekday } from '@hyperdesk/contract';
import { Spinner } from '../../components/Spinner';
import styles from './Timetable.module.css';

const DAY_NAMES: Record<Weekday, string> = {
  Mon: 'Monday',
  Tue: 'Tuesday',
  Wed: 'Wednesday',
  Thu: 'Thursday',
  Fri: 'Friday',
  Sat: 'Saturday',
  Sun: 'Sunday',
};

/** Every IANA zone the browser knows, with the course's first (a short list where the browser cannot list them). */
function zoneChoices(courseZone: string, current: string): string[] {
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC'];
  return [...new Set([courseZone, current, ...all])];
}

interface Props {
  /** The session being changed, or null to add one. */
  editing: ClassSession | null;
  courseZone: string;
  /** The course's first and last day (YYYY-MM-DD in its zone): the date picker's bounds. */
  firstDay: string;
  lastDay: string;
  busy: boolean;
  onSubmit(fields: ClassSessionFields): void;
  onCancel(): void;
}

/**
 * Adds or changes one class session: every week on some days, or once on a date; start and end times on the wall
 * clock of a time zone (the course's unless changed). The server checks everything again and says what is wrong.
 */
export function TimetableForm({ editing, courseZone, firstDay, lastDay, busy, onSubmit, onCancel }: Props) {
  const id = useId();
  const [kind, setKind] = useState<'weekly' | 'once'>(editing?.kind ?? 'weekly');
  const [days, setDays] = useState<Weekday[]>(editing?.days ?? []);
  const [date, setDate] = useState(editing?.date ?? '');
  const [start, setStart] = useState(editing?.start ?? '');
  const [end, setEnd] = useState(editing?.end ?? '');
  const [zone, setZone] = useState(editing?.timeZone ?? courseZone);
  const [problem, setProblem] = useState<string | null>(null);
  const zones = useMemo(() => zoneChoices(courseZone, zone), [courseZone, zone]);

  const toggle = (d: Weekday) => setDays((ds) => (ds.includes(d) ? ds.filter((x) => x !== d) : WEEKDAYS.filter((x) => x === d || ds.includes(x))));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (kind === 'weekly' && days.length === 0) return setProblem('Choose at least one day of the week.');
    if (kind === 'once' && !date) return setProblem('Choose the date of the class.');
    if (!start || !end) return setProblem('Enter when the class starts and ends.');
    if (end <= start) return setProblem('The class must end after it starts (on the same day).');
    setProblem(null);
    onSubmit(kind === 'weekly' ? { kind, days, start, end, timeZone: zone } : { kind, date, start, end, timeZone: zone });
  };

  return (
    <form className={styles.form} onSubmit={submit} noValidate aria-label={editing ? 'Change the class' : 'Add a class'}>
      <fieldset className={styles.fieldset}>
        <legend className={styles.label}>Repeats</legend>
        <div className={styles.segmented}>
          <label className={styles.segment}>
            <input type="radio" name={`${id}-kind`} checked={kind === 'weekly'} onChange={() => setKind('weekly')} />
            <span>Every week</span>
          </label>
          <label className={styles.segment}>
            <input type="radio" name={`${id}-kind`} checked={kind === 'once'} onChange={() => setKind('once')} />
            <span>One date</span>
          </label>
        </div>
      </fieldset>

      {kind === 'weekly' ? (
        <fieldset className={styles.fieldset}>
          <legend className={styles.label}>Days</legend>
          <div className={styles.days}>
            {WEEKDAYS.map((d) => (
              <label key={d} className={styles.day} title={DAY_NAMES[d]}>
                <input type="checkbox" checked={days.includes(d)} onChange={() => toggle(d)} aria-label={DAY_NAMES[d]} />
                <span aria-hidden="true">{d}</span>
              </label>
            ))}
          </div>
        </fieldset>
      ) : (
        <div className={styles.field}>
          <label className={styles.label} htmlFor={`${id}-date`}>
            Date
          </label>
          <input id={`${id}-date`} className={styles.input} type="date" min={firstDay} max={lastDay} value={date} onChange={(e) => setDate(e.target.value)} />
        </div>
      )}

      <div className={styles.times}>
        <div className={styles.field}>
          <label className={styles.label} htmlFor={`${id}-start`}>
            Starts
          </label>
          <input id={`${id}-start`} className={styles.input} type="time" step={60} value={start} onChange={(e) => setStart(e.target.value)} />
        </div>
        <div className={styles.field}>
          <label className={styles.label} htmlFor={`${id}-end`}>
            Ends
          </label>
          <input id={`${id}-end`} className={styles.input} type="time" step={60} value={end} onChange={(e) => setEnd(e.target.value)} />
        </div>
        <div className={`${styles.field} ${styles.zoneField}`}>
          <label className={styles.label} htmlFor={`${id}-zone`}>
            Time zone
          </label>
          <select id={`${id}-zone`} className={styles.input} value={zone} onChange={(e) => setZone(e.target.value)}>
            {zones.map((z) => (
              <option key={z} value={z}>
                {z === courseZone ? `${z} (the course's)` : z}
              </option>
            ))}
          </select>
        </div>
      </div>

      {problem ? (
        <p className={styles.error} role="alert">
          {problem}
        </p>
      ) : null}
      <div className={styles.formActions}>
        <button type="submit" className={styles.primaryButton} disabled={busy}>
          {editing ? 'Save Changes' : 'Add Class'}
        </button>
        {editing ? (
          <button type="button" className={styles.smallButton} onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        ) : null}
        {busy ? <Spinner small label={editing ? 'Saving the class' : 'Adding the class'} /> : null}
      </div>
    </form>
  );
}
