import { useId, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { rosterKey, uploadRoster } from '../../api/courses';
import { balanceKey } from '../../api/wallet';
import { Spinner } from '../../components/Spinner';
import styles from './Course.module.css';

/** The server's limit (server/src/modules/courses/routes.ts); checked here too so a big file is not sent at all. */
const MAX_BYTES = 256 * 1024;
const TYPE_MESSAGE = 'The student list must be a .csv or .txt file.';
const SIZE_MESSAGE = 'The file is too large (at most 256 kB).';
const FAILED_MESSAGE = 'The student list could not be uploaded. Please try again.';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Upload of a course's student list (spec §3, §5: .csv or .txt), inside the Student List (StudentList.tsx). A new
 * upload replaces the list; the answer's summary shows who was added and removed and which lines were not e-mail
 * addresses.
 */
export function RosterUpload({ packId }: { packId: string }) {
  const id = useId();
  const qc = useQueryClient();
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const upload = useMutation({
    mutationFn: (f: File) => uploadRoster(packId, f),
    onSuccess: () => {
      setFile(null);
      if (input.current) input.current.value = '';
    },
    onError: (err) => setProblem(err instanceof Error && err.message && !/^Request failed/.test(err.message) ? err.message : FAILED_MESSAGE),
    onSettled: () => Promise.all([qc.invalidateQueries({ queryKey: balanceKey }), qc.invalidateQueries({ queryKey: rosterKey(packId) })]),
  });

  const choose = (f: File | null) => {
    setFile(f);
    setProblem(null);
    upload.reset();
    if (f && !/\.(csv|txt)$/i.test(f.name)) setProblem(TYPE_MESSAGE);
    else if (f && f.size > MAX_BYTES) setProblem(SIZE_MESSAGE);
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!file || problem || upload.isPending) return;
    upload.mutate(file);
  };

  const summary = upload.data;
  return (
    <div className={styles.uploadPart} role="group" aria-labelledby={`${id}-title`}>
      <h4 id={`${id}-title`} className={styles.partTitle}>
        Upload a list
      </h4>
      <p className={styles.muted}>
        A .csv or .txt file with your students' e-mail addresses replaces the whole list; each new student gets an
        invitation e-mail.
      </p>
      <form className={styles.upload} onSubmit={submit}>
        <label className={styles.fileLabel} htmlFor={`${id}-file`}>
          Student list file (.csv or .txt)
        </label>
        <div className={styles.uploadRow}>
          <input
            ref={input}
            id={`${id}-file`}
            className={styles.file}
            type="file"
            accept=".csv,.txt"
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? `${id}-problem` : undefined}
            onChange={(e) => choose(e.target.files?.[0] ?? null)}
          />
          <button type="submit" className={styles.uploadButton} disabled={!file || Boolean(problem) || upload.isPending}>
            Upload List
          </button>
          {upload.isPending ? <Spinner small label="Uploading the student list" /> : null}
        </div>
      </form>
      {problem ? (
        <p id={`${id}-problem`} className={styles.error} role="alert">
          {problem}
        </p>
      ) : null}
      {summary ? (
        <div className={styles.summary} role="status">
          <p className={styles.summaryLine}>
            <strong>The student list was updated.</strong> Added: {summary.added} · Removed: {summary.removed} · On the
            list: {summary.total} · Invitations sent: {summary.invited}
          </p>
          {summary.notices.map((n) => (
            <p key={n} className={styles.summaryLine}>
              {n}
            </p>
          ))}
          {summary.invalid.length ? (
            <>
              <p className={styles.summaryLine}>
                {plural(summary.invalid.length, 'line was', 'lines were')} not a valid e-mail address:
              </p>
              <ul className={styles.invalid}>
                {summary.invalid.map((l) => (
                  <li key={l.line}>
                    Line {l.line}: <code>{l.value || '(empty)'}</code>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
