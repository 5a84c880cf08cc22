import { useCallback, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { WallStreamNote } from '@hyperdesk/contract';
import { lowerHand, wallKey, wallQuery } from '../../api/wall';
import { ApiError } from '../../api/http';
import { AppLayout } from '../../components/AppLayout';
import { Spinner } from '../../components/Spinner';
import { SeatTile } from './SeatTile';
import { WatchView } from './WatchView';
import { usePictures } from './usePictures';
import styles from './Wall.module.css';

/**
 * The instructor wall (issue 22.2): a live thumbnail of every running seat with the student's name and raised
 * hands; a click watches that desktop (view only) with Take over. The course's instructor only.
 */
export default function Wall() {
  const { courseId = '' } = useParams();
  const qc = useQueryClient();
  const wall = useQuery(wallQuery(courseId));
  const [watching, setWatching] = useState<string | null>(null);
  const [watchEnded, setWatchEnded] = useState(false);
  const refresh = useCallback(() => void qc.invalidateQueries({ queryKey: wallKey(courseId) }), [qc, courseId]);
  const onNote = useCallback(
    (n: WallStreamNote) => {
      if (n.t === 'watch-ended') setWatchEnded(true);
      if (n.t !== 'open') refresh();
    },
    [refresh],
  );
  const { pictures, failure } = usePictures(courseId, wall.isSuccess ? watching : null, onNote);
  const lower = useMutation({ mutationFn: (userId: string) => lowerHand(courseId, userId), onSettled: refresh });

  if (wall.isPending) {
    return (
      <AppLayout title="Watch students">
        <Spinner />
      </AppLayout>
    );
  }
  if (wall.isError) {
    const missing = wall.error instanceof ApiError && wall.error.status === 404;
    return (
      <AppLayout title="Watch students">
        <p className={styles.error} role="alert">{missing ? 'There is no such course among yours.' : wall.error.message}</p>
        <Link to="/dashboard">Back to your dashboard</Link>
      </AppLayout>
    );
  }
  const { seats, handsAway, courseName } = wall.data;
  const online = seats.filter((s) => s.online);
  const hands = seats.filter((s) => s.handRaisedAt && s.student).length + handsAway.length;
  const watched = watching ? seats.find((s) => s.machineId === watching) : undefined;

  if (watched) {
    return (
      <AppLayout title={`Watch students · ${courseName}`}>
        <WatchView
          key={watched.machineId}
          seat={watched}
          picture={pictures[watched.machineId]}
          ended={watchEnded || !watched.online}
          onBack={() => {
            setWatching(null);
            setWatchEnded(false);
            refresh();
          }}
          onChanged={refresh}
        />
      </AppLayout>
    );
  }

  return (
    <AppLayout title={`Watch students · ${courseName}`}>
      <div className={styles.summary}>
        <p className={styles.summaryText}>
          {online.length} of {seats.length} machines running · {hands === 1 ? '1 hand raised' : `${hands} hands raised`}
        </p>
        <Link to="/dashboard" className={styles.back}>Back to your dashboard</Link>
      </div>
      {failure ? <p className={styles.error} role="alert">Live pictures are not available: {failure}</p> : null}
      {handsAway.length ? (
        <ul className={styles.away} aria-label="Raised hands of students not at a machine">
          {handsAway.map((h) => (
            <li key={h.userId}>
              <strong>{h.name}</strong> raised a hand (not at a machine now)
              <button type="button" className={styles.small} onClick={() => lower.mutate(h.userId)}>Lower</button>
            </li>
          ))}
        </ul>
      ) : null}
      {online.length === 0 ? <p className={styles.empty}>No machine of this course is running. Start them from your dashboard (Start All).</p> : null}
      <ul className={styles.grid} aria-label="Machines of the course">
        {seats.map((s) => (
          <SeatTile key={s.machineId} seat={s} picture={pictures[s.machineId]} onWatch={() => setWatching(s.machineId)} onLowerHand={(uid) => lower.mutate(uid)} />
        ))}
      </ul>
    </AppLayout>
  );
}
