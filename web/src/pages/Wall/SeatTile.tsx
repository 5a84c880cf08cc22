import type { WallSeat } from '@hyperdesk/contract';
import styles from './Wall.module.css';

interface Props {
  seat: WallSeat;
  picture: string | undefined;
  onWatch(): void;
  onLowerHand(userId: string): void;
}

/** One machine of the course on the wall: its live thumbnail, who sits there and a raised hand. */
export function SeatTile({ seat, picture, onWatch, onLowerHand }: Props) {
  const who = seat.student?.name || seat.student?.email || 'Free seat';
  return (
    <li className={styles.tile} data-hand={seat.handRaisedAt ? 'raised' : undefined} data-testid="wall-seat" data-machine={seat.machineId}>
      <button type="button" className={styles.thumbButton} onClick={onWatch} disabled={!seat.online} aria-label={`Watch ${who} (${seat.machineName})`}>
        {seat.online && picture ? (
          <img className={styles.thumb} src={picture} alt={`Desktop of ${who}`} data-testid="wall-thumb" />
        ) : (
          <span className={styles.placeholder}>{seat.online ? 'Waiting for the picture…' : 'Not running'}</span>
        )}
        {seat.takenOver ? <span className={styles.controlled}>You control this desktop</span> : null}
      </button>
      <div className={styles.caption}>
        <span className={styles.student} title={seat.student?.email}>{who}</span>
        <span className={styles.machineName}>{seat.machineName}</span>
      </div>
      {seat.handRaisedAt && seat.student ? (
        <div className={styles.hand} data-testid="wall-hand">
          <span>Hand raised</span>
          <button type="button" className={styles.small} onClick={() => onLowerHand(seat.student!.userId)}>
            Lower
          </button>
        </div>
      ) : null}
    </li>
  );
}
