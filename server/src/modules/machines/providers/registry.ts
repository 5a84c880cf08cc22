import type { Config } from '../../../config';
import { connectionFromDir, createLxdClient } from './lxd/client';
import { createLxdProvider, type LxdProviderOptions } from './lxd/provider';
import type { MachineProvider } from './types';

type Factory = (config: Config, log: LxdProviderOptions['log']) => MachineProvider;

/**
 * Machine providers by kind, chosen by MACHINE_PROVIDER (house rule 7). A production provider (kubernetes: a
 * desktop pod per machine; cloud VMs) adds its factory here and its kind to the config enum. Tests that need no
 * real desktop pass a fake provider of their own (server/test), never through this registry.
 */
export const MACHINE_PROVIDERS: Record<Config['MACHINE_PROVIDER'], Factory> = {
  lxd: (config, log) =>
    createLxdProvider({
      lxd: createLxdClient(connectionFromDir(config.LXD_URL, config.lxdProject, config.lxdCertDir)),
      pool: config.LXD_POOL,
      network: config.LXD_NETWORK,
      image: config.lxdImage,
      usrVolume: config.lxdUsrVolume ?? undefined,
      log,
      limits: { cpus: config.MACHINE_CPUS, memoryMb: config.MACHINE_MEMORY_MB, pids: config.MACHINE_PIDS, diskMb: config.MACHINE_DISK_MB, rootMb: config.MACHINE_ROOT_MB },
    }),
};

export function createMachineProvider(config: Config, log: LxdProviderOptions['log']): MachineProvider {
  const factory = MACHINE_PROVIDERS[config.MACHINE_PROVIDER];
  if (!factory) throw new Error(`unknown MACHINE_PROVIDER ${config.MACHINE_PROVIDER}`);
  return factory(config, log);
}
