import { useState, type FormEvent, type ReactNode } from 'react';
import styles from './Admin.module.css';

/** A section's frame: heading, hint and its filters. */
export function Panel({ title, hint, filters, children }: { title: string; hint: string; filters?: ReactNode; children: ReactNode }) {
  return (
    <section className={styles.panel} aria-labelledby="admin-section">
      <div className={styles.panelHead}>
        <div>
          <h2 id="admin-section">{title}</h2>
          <p className={styles.hint}>{hint}</p>
        </div>
        {filters}
      </div>
      {children}
    </section>
  );
}

/** Search box applied on submit (Enter or the button), so typing does not fire a query per key. */
export function SearchForm({ label, placeholder, onSearch, children }: { label: string; placeholder: string; onSearch(q: string): void; children?: ReactNode }) {
  const [text, setText] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSearch(text.trim());
  };
  return (
    <form className={styles.filters} role="search" onSubmit={submit}>
      {children}
      <label>
        {label}
        <input type="search" value={text} placeholder={placeholder} maxLength={200} onChange={(e) => setText(e.target.value)} />
      </label>
      <button type="submit" className={styles.small} style={{ minHeight: 40 }}>
        Search
      </button>
    </form>
  );
}

/** A filter's select over a contract enum (`schema`); the chosen value is parsed by it before `onChange`. */
export function FilterSelect<T extends string>({ label, schema, value, labels, onChange }: {
  label: string;
  schema: { options: readonly NoInfer<T>[]; parse(v: unknown): NoInfer<T> };
  value: T;
  labels(v: NoInfer<T>): string;
  onChange(v: NoInfer<T>): void;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(schema.parse(e.target.value))}>
        {schema.options.map((s) => (
          <option key={s} value={s}>
            {labels(s)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** What the last action did (polite) or why it failed (alert). */
export function ActionStatus({ message, error }: { message: string | null; error: string | null }) {
  if (error) return <p className={`${styles.status} ${styles.statusError}`} role="alert">{error}</p>;
  if (message) return <p className={styles.status} role="status">{message}</p>;
  return null;
}

/** A machine's name with its id underneath (the fleet's and the hours page's first column). */
export function MachineCell({ name, id }: { name: string; id: string }) {
  return (
    <td>
      {name}
      <span className={`${styles.sub} ${styles.mono}`}>{id}</span>
    </td>
  );
}

export const formatDate = (iso: string | null) => (iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' }) : '—');
export const formatDay = (iso: string) => new Date(iso).toLocaleDateString('en-GB', { dateStyle: 'medium' });

/** 690 → "11 h 30 min"; negative amounts keep their sign. */
export function formatMinutes(m: number): string {
  const sign = m < 0 ? '−' : '';
  const a = Math.abs(m);
  const h = Math.floor(a / 60);
  const min = a % 60;
  return `${sign}${h ? `${h} h` : ''}${h && min ? ' ' : ''}${min || !h ? `${min} min` : ''}`;
}

export function formatMoney(minor: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-GB', { style: 'currency', currency }).format(minor / 100);
  } catch {
    return `${(minor / 100).toFixed(2)} ${currency}`;
  }
}

export function Badge({ tone, children }: { tone?: 'good' | 'warn' | 'bad'; children: ReactNode }) {
  return <span className={`${styles.badge} ${tone ? styles[tone] : ''}`}>{children}</span>;
}
