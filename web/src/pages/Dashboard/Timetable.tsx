import { useId, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { dayInZone, describeClassSession, formatClassTime, type ClassSession, type ClassSessionFields } from '@hyperdesk/contract';
import { addClassSession, changeClassSession, deleteClassSession, nextClassesKey, timetableKey, timetableQuery } from '../../api/timetable';
import { ApiError } from '../../api/http';
import { Spinner } from '../../components/Spinner';
import { ConfirmDialog } from './ConfirmDialog';
import { TimetableForm } from './TimetableForm';
import styles from './Timetable.module.css';

const FAILED = 'That did not work. Please try again.';
const messageOf = (err: unknown) => (err instanceof ApiError && err.status < 500 ? err.message : FAILED);

/**
 * The instructor's class timetable of a course (issue 22.1): the class sessions (every week on some days, or once on
 * a date), each with its next class, Edit and Delete, and the form to add one. The course's machines start by
 * themselves before each class and stop when it ends; Start All and Stop All still work at any time.
 */
export function Timetable({ packId, region }: { packId: string; region: string }) {
  const id = useId();
  const qc = useQueryClient();
  const timetable = useQuery(timetableQuery(packId));
  const [editing, setEditing] = useState<ClassSession | null>(null);
  const [deleting, setDeleting] = useState<ClassSession | null>(null);
  const [outcome, setOutcome] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  // A new key after each save: the form starts empty again.
  const [formRound, setFormRound] = useState(0);

  const done = (text: string) => {
    setEditing(null);
    setFormRound((n) => n + 1);
    setOutcome({ kind: 'ok', text });
  };
  const settle = () => Promise.all([qc.invalidateQueries({ queryKey: timetableKey(packId) }), qc.invalidateQueries({ queryKey: nextClassesKey })]);
  const save = useMutation({
    mutationFn: (f: { id: string | null; fields: ClassSessionFields }) => (f.id ? changeClassSession(packId, f.id, f.fields) : addClassSession(packId, f.fields)),
    onSuccess: (answer, f) => {
      qc.setQueryData(timetableKey(packId), answer);
      done(f.id ? 'The class was changed.' : 'The class was added.');
    },
    onError: (err) => setOutcome({ kind: 'error', text: messageOf(err) }),
    onSettled: settle,
  });
  const remove = useMutation({
    mutationFn: (sessionId: string) => deleteClassSession(packId, sessionId),
    onSuccess: () => done('The class was deleted.'),
    onError: (err) => setOutcome({ kind: 'error', text: messageOf(err) }),
    onSettled: settle,
  });

  const t = timetable.data;
  return (
    <section className={styles.block} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className={styles.title}>
        Class Timetable
      </h3>
      {timetable.isPending ? (
        <Spinner small label="Loading the timetable" />
      ) : !t ? (
        <p className={styles.error} role="alert">
          The timetable could not be loaded.{' '}
          <button type="button" className={styles.inlineButton} onClick={() => void timetable.refetch()}>
            Try again
          </button>
        </p>
      ) : (
        <>
          <p className={styles.intro}>
            Machines start by themselves {t.warmMinutes} minutes before each class and stop when it ends. Times are in{' '}
            {t.timeZone} unless you choose another zone.
          </p>
          {t.sessions.length === 0 ? (
            <p className={styles.empty}>No classes yet. Add the first one below.</p>
          ) : (
            <ul className={styles.sessions} aria-label="Class sessions">
              {t.sessions.map((s) => (
                <li key={s.id} className={styles.session} data-editing={editing?.id === s.id || undefined}>
                  <div className={styles.sessionText}>
                    <span className={styles.sessionWhen}>{describeClassSession(s, region)}</span>
                    <span className={styles.sessionNext}>
                      {s.next ? `Next: ${formatClassTime(s.next.startAt, s.next.endAt, region)}` : 'No class left inside the course dates'}
                    </span>
                  </div>
                  <div className={styles.sessionActions}>
                    <button type="button" className={styles.smallButton} aria-label={`Edit ${describeClassSession(s, region)}`} onClick={() => (setOutcome(null), setEditing(s))} disabled={save.isPending || remove.isPending}>
                      Edit
                    </button>
                    <button type="button" className={styles.smallButton} aria-label={`Delete ${describeClassSession(s, region)}`} onClick={() => setDeleting(s)} disabled={save.isPending || remove.isPending}>
                      Delete
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}

          {outcome ? (
            <p className={outcome.kind === 'error' ? styles.error : styles.ok} role={outcome.kind === 'error' ? 'alert' : 'status'}>
              {outcome.text}
            </p>
          ) : null}

          <h4 className={styles.formTitle}>{editing ? 'Change the class' : 'Add a class'}</h4>
          <TimetableForm
            key={editing?.id ?? `new-${formRound}`}
            editing={editing}
            courseZone={t.timeZone}
            firstDay={dayInZone(t.startAt, t.timeZone)}
            lastDay={dayInZone(t.endAt, t.timeZone)}
            busy={save.isPending}
            onSubmit={(fields) => {
              setOutcome(null);
              save.mutate({ id: editing?.id ?? null, fields });
            }}
            onCancel={() => setEditing(null)}
          />
        </>
      )}
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => {
          if (!open) setDeleting(null);
        }}
        title="Delete this class?"
        description={deleting ? `${describeClassSession(deleting, region)}. Machines no longer start for it; a class that is on now still stops at its end.` : ''}
        confirmLabel="Delete"
        onConfirm={() => {
          if (deleting) remove.mutate(deleting.id);
        }}
      />
    </section>
  );
}
