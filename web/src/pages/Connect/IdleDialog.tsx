import { Dialog } from '../../components/Dialog';
import styles from './Connect.module.css';

function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** 'Still there?': the machine stops soon for lack of use unless the user answers (or uses the desktop). */
export function IdleDialog({ stopAt, onStillHere }: { stopAt: string | null; onStillHere(): void }) {
  return (
    <Dialog
      open={stopAt !== null}
      onOpenChange={(open) => {
        if (!open) onStillHere();
      }}
      title="Still there?"
      description={stopAt ? `Your machine hasn't been used for a while. It will stop at ${clock(stopAt)} to save your hours.` : undefined}
    >
      <div className={styles.buttons}>
        <button type="button" className={styles.primary} onClick={onStillHere} autoFocus>
          I'm still here
        </button>
      </div>
    </Dialog>
  );
}
