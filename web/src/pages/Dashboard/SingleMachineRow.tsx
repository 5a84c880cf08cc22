import { useState } from 'react';
import { Link } from 'react-router';
import { ConfigDetailsDialog } from './ConfigDetailsDialog';
import { ConnectButton } from './ConnectButton';
import { MachineCard } from './MachineCard';
import { ResetMachineDialog } from './ResetMachineDialog';
import { UsageDialog } from './UsageDialog';
import type { MachineRowProps } from './rows';
import { useSlotAction } from '../../lib/useSlotAction';
import styles from './Dashboard.module.css';

export const STARTING_TOOLTIP = 'Your machine is starting, please wait';

/** A single user's own machine (spec §6): Start Machine when offline; Connect and Stop otherwise. */
export function SingleMachineRow({ entry }: MachineRowProps) {
  const { busy, failure, start, stop } = useSlotAction(entry.packId);
  const [configOpen, setConfigOpen] = useState(false);
  const [resetOpen, setResetOpen] = useState(false);
  const [usageOpen, setUsageOpen] = useState(false);
  const offline = entry.instanceStatus === 'offline';
  const noHours = entry.timeLeft <= 0;

  const actions = offline ? (
    <>
      <button type="button" className={styles.primary} onClick={() => start()} disabled={busy || noHours}>
        Start Machine
      </button>
      {noHours ? (
        <Link to="/setup" className={styles.textLink}>
          Buy more hours
        </Link>
      ) : null}
    </>
  ) : (
    <>
      <ConnectButton entry={entry} disabledReason={entry.instanceStatus === 'processing' ? STARTING_TOOLTIP : null} />
      <button type="button" className={styles.secondary} onClick={stop} disabled={busy}>
        Stop
      </button>
    </>
  );

  return (
    <MachineCard
      entry={entry}
      actions={actions}
      failure={failure}
      links={
        <>
          <button type="button" className={styles.textLink} onClick={() => setConfigOpen(true)}>
            Config Details
          </button>
          <button type="button" className={styles.textLink} onClick={() => setResetOpen(true)}>
            Reset machine
          </button>
          <button type="button" className={styles.textLink} onClick={() => setUsageOpen(true)}>
            Usage history
          </button>
        </>
      }
    >
      <ConfigDetailsDialog open={configOpen} onOpenChange={setConfigOpen} machineName={entry.machineName} config={entry.machineConfig} />
      <ResetMachineDialog packId={entry.packId} machineName={entry.machineName} open={resetOpen} onOpenChange={setResetOpen} />
      <UsageDialog packId={entry.packId} machineName={entry.machineName} course={false} open={usageOpen} onOpenChange={setUsageOpen} />
    </MachineCard>
  );
}
