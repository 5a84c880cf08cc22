import type { ReactNode } from 'react';
import { Dialog } from '../../components/Dialog';
import styles from './Dashboard.module.css';

interface Props {
  open: boolean;
  onOpenChange(open: boolean): void;
  title: string;
  description: ReactNode;
  /** The confirming button's label, e.g. "Remove". */
  confirmLabel: string;
  onConfirm(): void;
}

/** Asks before an action that ends something for other people (removing a student, stopping their machines). */
export function ConfirmDialog({ open, onOpenChange, title, description, confirmLabel, onConfirm }: Props) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={title} description={description}>
      <div className={styles.dialogActions}>
        <button type="button" className={styles.secondary} onClick={() => onOpenChange(false)}>
          Cancel
        </button>
        <button
          type="button"
          className={styles.danger}
          onClick={() => {
            onOpenChange(false);
            onConfirm();
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
