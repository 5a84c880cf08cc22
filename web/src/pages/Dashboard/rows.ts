import type { ComponentType } from 'react';
import type { BalanceEntry } from '@hyperdesk/contract';

export interface MachineRowProps {
  entry: BalanceEntry;
}

export type MachineRow = ComponentType<MachineRowProps>;
