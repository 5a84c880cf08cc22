import { useId, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Dialog } from '../../components/Dialog';
import { resetSlot } from '../../api/machines';
import { balanceKey } from '../../api/wallet';
import styles from './Dashboard.module.css';

interface Props {
  packId: string;
  machineName: string;
  open: boolean;
  onOpenChange(open: boolean): void;
  /** Whose home folder the box erases, for an instructor resetting a student's seat (default: the user's own). */
  homeOwner?: string;
}

/**
 * Reset machine: the desktop back to a fresh image (what was installed or changed outside the home folder goes);
 * the home folder stays unless the user ticks the box. A running machine restarts; a stopped one is fresh at its
 * next start.
 */
export function ResetMachineDialog({ packId, machineName, open, onOpenChange, homeOwner }: Props) {
  const qc = useQueryClient();
  const [eraseHome, setEraseHome] = useState(false);
  const boxId = useId();
  const reset = useMutation({
    mutationFn: () => resetSlot(packId, eraseHome),
    onSuccess: () => {
      setEraseHome(false);
      onOpenChange(false);
    },
    onSettled: () => qc.invalidateQueries({ queryKey: balanceKey }),
  });
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Reset machine?"
      description={
        homeOwner === undefined
          ? `${machineName} goes back to a fresh desktop: programs you installed and changes outside your home folder are removed. If it is running, it restarts and open sessions end.`
          : `${machineName} goes back to a fresh desktop: programs installed and changes outside the home folder are removed. If it is running, it restarts and its student's session ends.`
      }
    >
      <p className={styles.checkRow}>
        <input id={boxId} type="checkbox" checked={eraseHome} onChange={(e) => setEraseHome(e.target.checked)} />
        <label htmlFor={boxId}>{homeOwner ? `Also erase ${homeOwner}'s home folder (every file in it is deleted)` : 'Also erase the home folder (every file in it is deleted)'}</label>
      </p>
      {reset.isError ? <p role="alert" className={styles.stopReason}>{reset.error.message}</p> : null}
      <div className={styles.dialogActions}>
        <button type="button" className={styles.secondary} onClick={() => onOpenChange(false)}>
          Cancel
        </button>
        <button type="button" className={styles.danger} disabled={reset.isPending} onClick={() => reset.mutate()}>
          Reset machine
        </button>
      </div>
    </Dialog>
  );
}
