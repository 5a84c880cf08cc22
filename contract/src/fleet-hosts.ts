import { z } from 'zod';

/**
 * GET /v1/admin/fleet/members: the hosts machines run on (the members of an LXD cluster, or the one host), their
 * load, GPUs and the machines on each (issue 20, part 5). Figures a host does not report are null.
 */
export const FleetHostMachine = z.object({
  id: z.string(),
  /** The machine's name, or null for an instance no machine of this deployment has (left over). */
  name: z.string().nullable(),
  /** The single user's e-mail or the course's name. */
  owner: z.string().nullable(),
  observed: z.enum(['offline', 'processing', 'online']).nullable(),
  /** The engine's instance and its state there (Running, Stopped, Error on a lost member). */
  instance: z.string(),
  status: z.string(),
  gpu: z.boolean(),
});
export type FleetHostMachine = z.infer<typeof FleetHostMachine>;

export const FleetHost = z.object({
  name: z.string(),
  online: z.boolean(),
  /** The engine's own words on its state ("Fully operational", "No heartbeat for 21s"). */
  message: z.string(),
  cpus: z.number().nullable(),
  memoryTotal: z.number().nullable(),
  memoryUsed: z.number().nullable(),
  /** The 1-minute load average where the engine reports it. */
  load: z.number().nullable(),
  gpus: z.array(z.object({ vendor: z.string(), product: z.string() })),
  /**
   * The desktops' storage pool on the host (their roots and homes), bytes used and its size. Each home has its own
   * quota, but they share the pool: once it is full no desktop there can write, whatever its quota says.
   */
  storageUsed: z.number().nullable(),
  storageTotal: z.number().nullable(),
  machines: z.array(FleetHostMachine),
});
export type FleetHost = z.infer<typeof FleetHost>;

export const FleetHosts = z.object({
  /** The machine provider (lxd); hosts are listed where it knows them. */
  provider: z.string(),
  members: z.array(FleetHost),
  /** Why the hosts could not be read (the engine unreachable), else null. */
  error: z.string().nullable(),
});
export type FleetHosts = z.infer<typeof FleetHosts>;
