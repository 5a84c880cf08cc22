import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { myWallKey, myWallQuery, setHand } from '../../api/wall';
import styles from './ClassHelp.module.css';

/** Raise hand (issue 22.2): a student asks the instructor for help; the instructor's wall shows it. */
export function RaiseHandButton({ packId }: { packId: string }) {
  const qc = useQueryClient();
  const mine = useQuery(myWallQuery(packId));
  const raised = mine.data?.hand ?? false;
  const toggle = useMutation({
    mutationFn: () => setHand(packId, !raised),
    onSuccess: (answer) => qc.setQueryData(myWallKey(packId), answer),
  });
  if (!mine.data) return null;
  return (
    <button
      type="button"
      className={`${styles.hand} ${raised ? styles.raised : ''}`}
      aria-pressed={raised}
      onClick={() => toggle.mutate()}
      disabled={toggle.isPending}
      title={raised ? 'Your instructor sees your raised hand' : 'Ask your instructor for help'}
    >
      {raised ? 'Lower hand' : 'Raise hand'}
    </button>
  );
}

const ENDED_NOTICE_MS = 8_000;

/**
 * Tells the student while their instructor controls the desktop (take-over), and for a few seconds after it ended.
 * Their own keyboard and mouse keep working meanwhile.
 */
export function TakeoverNotice({ packId }: { packId: string }) {
  const mine = useQuery(myWallQuery(packId));
  const takeover = mine.data?.takeover ?? null;
  const endedAt = mine.data?.lastEndedAt ?? null;
  const [seenLive, setSeenLive] = useState(false);
  const [showEnded, setShowEnded] = useState(false);
  useEffect(() => {
    if (takeover) {
      setSeenLive(true);
      setShowEnded(false);
      return;
    }
    if (!seenLive || !endedAt) return;
    setShowEnded(true);
    const t = setTimeout(() => {
      setShowEnded(false);
      setSeenLive(false);
    }, ENDED_NOTICE_MS);
    return () => clearTimeout(t);
  }, [takeover, endedAt, seenLive]);
  if (takeover) {
    return (
      <div className={styles.notice} role="status" data-testid="takeover-notice">
        <strong>{takeover.by}</strong> (your instructor) is controlling your desktop. You can keep watching; your keyboard and mouse still work.
      </div>
    );
  }
  if (showEnded) {
    return (
      <div className={`${styles.notice} ${styles.ended}`} role="status" data-testid="takeover-notice">
        Your instructor has stopped controlling your desktop.
      </div>
    );
  }
  return null;
}
