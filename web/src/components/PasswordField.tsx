import { useId, useState, type InputHTMLAttributes } from 'react';
import styles from './forms.module.css';

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'className' | 'type'>;

/** Labelled text input. */
export function TextField({ label, type = 'text', ...input }: InputProps & { label: string; type?: 'text' | 'email' }) {
  const id = useId();
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      <input id={id} type={type} className={styles.input} {...input} />
    </div>
  );
}

/** Labelled password input with a show/hide toggle. */
export function PasswordField({ label, ...input }: InputProps & { label: string }) {
  const id = useId();
  const [visible, setVisible] = useState(false);
  return (
    <div className={styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      <div className={styles.control}>
        <input id={id} type={visible ? 'text' : 'password'} className={`${styles.input} ${styles.hasToggle}`} {...input} />
        <button
          type="button"
          className={styles.toggle}
          aria-label={visible ? 'Hide password' : 'Show password'}
          aria-controls={id}
          onClick={() => setVisible((v) => !v)}
        >
          <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
            <path d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12z" />
            <circle cx="12" cy="12" r="3" />
            {visible ? <path d="M4 4l16 16" /> : null}
          </svg>
        </button>
      </div>
    </div>
  );
}
