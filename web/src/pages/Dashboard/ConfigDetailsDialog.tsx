import type { MachineConfig } from '@hyperdesk/contract';
import { Dialog } from '../../components/Dialog';
import styles from './Dashboard.module.css';

interface Props {
  open: boolean;
  onOpenChange(open: boolean): void;
  machineName: string;
  config: MachineConfig;
}

/** Spec §3 machine config display fields, closed with 'Done'. */
export function ConfigDetailsDialog({ open, onOpenChange, machineName, config }: Props) {
  const rows: Array<[string, string]> = [
    ['Platform', config.platform],
    ['CPU', config.cpu],
    ['CPU Cores', String(config.cores)],
    ['RAM', config.ram],
    ['GPU', config.gpu],
    ['GPU RAM', config.gpu_ram],
  ];
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title="Config Details" description={machineName}>
      <dl className={styles.configRows}>
        {rows.map(([k, v]) => (
          <div key={k} className={styles.configRow}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <div className={styles.dialogActions}>
        <button type="button" className={styles.primary} onClick={() => onOpenChange(false)}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
