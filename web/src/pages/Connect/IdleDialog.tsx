import { Dialog } from '../../components/Dialog';
import styles from './Connect.module.css';

function clock(iso: string): string {
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
export function IdleDialog({ stopAt, reason, onStillHere }: { stopAt: string | null; reason: 'idle' | 'class-end'; onStillHere(): void }) {
  const text = TEXTS[reason];
  return (
    <Dialog
      open={stopAt !== null}
      onOpenChange={(open) => {
        if (!open) onStillHere();
      }}
      title={text.title}
      description={stopAt ? text.description(clock(stopAt)) : undefined}
    >
      <div className={styles.buttons}>
        <button type="button" className={styles.primary} onClick={onStillHere} autoFocus>
          {text.button}
        </button>
      </div>
    </Dialog>
  );
}
