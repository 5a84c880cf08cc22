import { formatTimeInZone } from '@hyperdesk/contract';
import { Dialog } from '../../components/Dialog';
import styles from './Connect.module.css';

/** The stop time on the zone's wall clock (a class: the course's, as the dashboard shows it), else the browser's. */
function clock(iso: string, timeZone: string | null): string {
  try {
    const t = timeZone ? formatTimeInZone(iso, timeZone) : '';
    if (t) return t;
  } catch {
    // a zone this browser does not know: its own clock
  }
  return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

const TEXTS = {
  idle: {
    title: 'Still there?',
    description: (at: string) => `Your machine hasn't been used for a while. It will stop at ${at} to save your hours.`,
    button: "I'm still here",
  },
  'class-end': {
    title: 'The class ends soon',
    description: (at: string) => `The class ends at ${at} and this machine stops then. Save your work before it does; your files in your home folder are kept.`,
    button: 'OK',
  },
};

/**
 * The machine stops soon: 'Still there?' for lack of use (unless the user answers or uses the desktop), or the end
 * of the class, which nothing in the tab changes.
 */
export function IdleDialog({ stopAt, reason, timeZone, onStillHere }: { stopAt: string | null; reason: 'idle' | 'class-end'; timeZone: string | null; onStillHere(): void }) {
  const text = TEXTS[reason];
  return (
    <Dialog
      open={stopAt !== null}
      onOpenChange={(open) => {
        if (!open) onStillHere();
      }}
      title={text.title}
      description={stopAt ? text.description(clock(stopAt, timeZone)) : undefined}
    >
      <div className={styles.buttons}>
        <button type="button" className={styles.primary} onClick={onStillHere} autoFocus>
          {text.button}
        </button>
      </div>
    </Dialog>
  );
}
