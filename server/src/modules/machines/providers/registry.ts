import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../../config';
import { createLocalProvider, type LocalProviderOptions } from './local';
import { connectionFromDir, createLxdClient } from './lxd/client';
import { createLxdProvider } from './lxd/provider';
import type { MachineProvider } from './types';

type Factory = (config: Config, log: LocalProviderOptions['log']) => MachineProvider;

/**
 * Machine providers by kind, chosen by MACHINE_PROVIDER (house rule 7). A production provider (kubernetes: a
 * desktop pod per machine; cloud VMs) adds its factory here and its kind to the config enum.
 */
export const MACHINE_PROVIDERS: Record<Config['MACHINE_PROVIDER'], Factory> = {
  lxd: (config, log) =>
    createLxdProvider({
      lxd: createLxdClient(connectionFromDir(config.LXD_URL, config.lxdProject, config.lxdCertDir)),
      pool: config.LXD_POOL,
      network: config.LXD_NETWORK,
      image: config.LXD_IMAGE,
      log,
      limits: { cpus: config.MACHINE_CPUS, memoryMb: config.MACHINE_MEMORY_MB, pids: config.MACHINE_PIDS, diskMb: config.MACHINE_DISK_MB, rootMb: config.MACHINE_ROOT_MB },
    }),
  local: (config, log) =>
    createLocalProvider({
      dataDir: machinesDataDir(config),
      log,
      egress: config.MACHINE_EGRESS,
      limits: { memoryMb: config.MACHINE_MEMORY_MB, pids: config.MACHINE_PIDS, cpuShares: config.MACHINE_CPU_SHARES, diskMb: config.MACHINE_DISK_MB },
    }),
};

export function createMachineProvider(config: Config, log: LocalProviderOptions['log']): MachineProvider {
  const factory = MACHINE_PROVIDERS[config.MACHINE_PROVIDER];
  if (!factory) throw new Error(`unknown MACHINE_PROVIDER ${config.MACHINE_PROVIDER}`);
  return factory(config, log);
}

/**
 * DATA_DIR, or for an in-memory deployment (DATA_DIR=memory://, whose machines vanish with the process) a
 * directory of this process under the temp dir, removed at exit so any server sweeps desktops it left running.
 */
function machinesDataDir(config: Config): string {
  if (config.DATA_DIR !== 'memory://') return config.dataDir;
  const dir = path.join(os.tmpdir(), `hyperdesk-memory-${process.pid}`);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
