import * as Tooltip from '@radix-ui/react-tooltip';
import type { BalanceEntry } from '@hyperdesk/contract';
import { connectHref } from '../../lib/connectLink';
import { offerTicket } from '../../api/ticketHandoff';
import styles from './Dashboard.module.css';

interface Props {
  entry: BalanceEntry;
  /** When set, the button is disabled and this explains why (tooltip on hover and focus). */
  disabledReason?: string | null;
}

/**
 * Opens the machine's desktop in a new tab (spec §7). A disabled Connect stays focusable (aria-disabled) so its
 * tooltip can be reached by keyboard and pointer alike.
 */
export function ConnectButton({ entry, disabledReason }: Props) {
  const open = () => {
    if (disabledReason) return;
    // Opened with its opener, so Chrome runs it in this page's renderer process instead of starting one (the tab's
    // first script drops the opener at once: early/main.ts).
    window.open(connectHref({ url: entry.url, role: entry.role, packId: entry.packId, machineName: entry.machineName }), '_blank');
    offerTicket(entry.url); // the tab's first ticket, fetched while it loads

  };
  const button = (
    <button
      type="button"
      className={styles.primary}
      aria-disabled={disabledReason ? true : undefined}
      onClick={open}
    >
      Connect
    </button>
  );
  if (!disabledReason) return button;
  return (
    <Tooltip.Provider delayDuration={150}>
      <Tooltip.Root>
        <Tooltip.Trigger asChild>{button}</Tooltip.Trigger>
        <Tooltip.Portal>
          <Tooltip.Content className={styles.tooltip} sideOffset={6}>
            {disabledReason}
            <Tooltip.Arrow className={styles.tooltipArrow} />
          </Tooltip.Content>
        </Tooltip.Portal>
      </Tooltip.Root>
    </Tooltip.Provider>
  );
}
