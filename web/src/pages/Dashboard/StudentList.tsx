import { useId, useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RosterInviteAnswer } from '@hyperdesk/contract';
import { addToRoster, removeFromRoster, resendInvitation, rosterKey, rosterQuery } from '../../api/courses';
import { ApiError } from '../../api/http';
import { balanceKey } from '../../api/wallet';
import { Spinner } from '../../components/Spinner';
import { RosterTable } from './RosterTable';
import { RosterUpload } from './RosterUpload';
import styles from './Course.module.css';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const FAILED = 'That did not work. Please try again.';

type Outcome = { kind: 'ok'; text: string; notices: string[] } | { kind: 'error'; text: string };

const failure = (err: unknown): Outcome => ({ kind: 'error', text: err instanceof ApiError && err.status < 500 ? err.message : FAILED });

function invited(verb: string, a: RosterInviteAnswer): Outcome {
  return { kind: 'ok', text: a.invited ? `${a.email} ${verb} and invited by e-mail.` : `${a.email} ${verb}.`, notices: a.notices };
}

interface Props {
  packId: string;
  region: string;
  /** The list's size from the balance, shown until the list itself is read. */
  rosterSize: number;
  /** Who sits where and the list's size in the balance held now: the list is read again when they change. */
  seatsKey: string;
}

/**
 * A course's student list (issue 22): every address with its state and machine, one address added, removed or
 * re-invited at a time, and the upload that replaces the whole list.
 */
export function StudentList({ packId, region, rosterSize, seatsKey }: Props) {
  const id = useId();
  const qc = useQueryClient();
  const list = useQuery({ ...rosterQuery(packId, seatsKey), placeholderData: keepPreviousData });
  const [email, setEmail] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const settle = () => Promise.all([qc.invalidateQueries({ queryKey: rosterKey(packId) }), qc.invalidateQueries({ queryKey: balanceKey })]);

  const add = useMutation({
    mutationFn: (address: string) => addToRoster(packId, address),
    onSuccess: (a) => {
      setEmail('');
      setOutcome(invited('was added', a));
    },
    onError: (err) => setOutcome(failure(err)),
    onSettled: settle,
  });
  const resend = useMutation({
    mutationFn: (address: string) => resendInvitation(packId, address),
    onSuccess: (a) => setOutcome({ kind: 'ok', text: `The invitation was sent again to ${a.email}.`, notices: a.notices }),
    onError: (err) => setOutcome(failure(err)),
    onSettled: settle,
  });
  const remove = useMutation({
    mutationFn: (address: string) => removeFromRoster(packId, address),
    onSuccess: (a) => setOutcome({ kind: 'ok', text: `${a.email} was removed from the list.`, notices: [] }),
    onError: (err) => setOutcome(failure(err)),
    onSettled: settle,
  });
  const busyEmail = resend.isPending ? resend.variables : remove.isPending ? remove.variables : null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const address = email.trim();
    if (add.isPending) return;
    if (!address) return setOutcome({ kind: 'error', text: 'Enter a student’s e-mail address.' });
    setOutcome(null);
    add.mutate(address);
  };

  const students = list.data?.students;
  const count = students?.length ?? rosterSize;
  return (
    <section className={styles.block} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className={styles.blockTitle}>
        Student List
      </h3>
      <p className={styles.muted}>
        <span>{count > 0 ? `${plural(count, 'student', 'students')} on the list.` : 'No students on the list yet.'}</span>{' '}
        {list.data ? `It can hold ${list.data.max} addresses. ` : null}
        Each new student gets an invitation e-mail.
      </p>

      <form className={styles.addRow} onSubmit={submit} noValidate>
        <label className={styles.fileLabel} htmlFor={`${id}-email`}>
          Add a student
        </label>
        <div className={styles.uploadRow}>
          <input
            id={`${id}-email`}
            className={styles.emailInput}
            type="email"
            autoComplete="off"
            placeholder="student@school.edu"
            maxLength={254}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
          <button type="submit" className={styles.uploadButton} disabled={add.isPending}>
            Add Student
          </button>
          {add.isPending ? <Spinner small label="Adding the student" /> : null}
        </div>
      </form>

      {outcome?.kind === 'error' ? (
        <p className={styles.error} role="alert">
          {outcome.text}
        </p>
      ) : null}
      {outcome?.kind === 'ok' ? (
        <div className={styles.summary} role="status">
          <p className={styles.summaryLine}>{outcome.text}</p>
          {outcome.notices.map((n) => (
            <p key={n} className={styles.summaryLine}>
              {n}
            </p>
          ))}
        </div>
      ) : null}

      {list.isPending ? (
        <Spinner small label="Loading the student list" />
      ) : list.isError && !students ? (
        <p className={styles.error} role="alert">
          The student list could not be loaded.{' '}
          <button type="button" className={styles.inlineButton} onClick={() => void list.refetch()}>
            Try again
          </button>
        </p>
      ) : students && students.length > 0 ? (
        <RosterTable students={students} region={region} busyEmail={busyEmail ?? null} onResend={(a) => resend.mutate(a)} onRemove={(a) => remove.mutate(a)} />
      ) : null}

      <RosterUpload packId={packId} />
    </section>
  );
}
