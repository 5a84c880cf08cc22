import { alreadyExists, busy, notFound, type LxdClient } from './client';

export const PROFILE = 'hyperdesk-desktop';
/** The operator's profile for GPU desktops (docs/providers.md): when it exists, every new desktop gets it and a free GPU. */
export const GPU_PROFILE = 'hyperdesk-gpu';

export interface ProfileOptions {
  pool: string;
  network: string;
  limits: { cpus: number; memoryMb: number; pids: number; rootMb: number };
}

/**
 * The deployment's desktop profile (limits, isolated id map, no nesting, a NIC on the managed bridge) and whether new
 * desktops also get the operator's GPU profile.
 */
export function createProfiles(lxd: LxdClient, opts: ProfileOptions) {
  let profileReady: Promise<void> | null = null;
  let gpuCheckedAt = 0;
  let gpuWanted = false;

  /** The deployment's profile, written from this configuration at the first start (a restart applies new limits). */
  function ensure(): Promise<void> {
    profileReady ??= write().catch((err: unknown) => {
      profileReady = null;
      throw err;
    });
    return profileReady;
  }

  async function write(): Promise<void> {
    const l = opts.limits;
    const body = {
      description: 'Hyperdesk desktops (written by the server from its configuration)',
      config: {
        'limits.cpu': String(l.cpus),
        'limits.memory': `${l.memoryMb}MB`,
        'limits.memory.enforce': 'hard',
        'limits.processes': String(l.pids),
        'security.idmap.isolated': 'true',
        'security.nesting': 'false',
        'security.privileged': 'false',
        'security.syscalls.deny_compat': 'true',
      },
      devices: {
        root: { type: 'disk', path: '/', pool: opts.pool, size: `${l.rootMb}MB` },
        eth0: { type: 'nic', name: 'eth0', network: opts.network, 'security.port_isolation': 'true', 'security.mac_filtering': 'true' },
      },
    };
    try {
      await lxd.send('PUT', `/1.0/profiles/${PROFILE}`, body);
    } catch (err) {
      // Saved, but not yet applied to an instance busy with another operation: it has the profile from its next start.
      if (busy(err) && /profile change still saved/i.test((err as Error).message)) return;
      if (!notFound(err)) throw err;
      // Another server of the deployment may make it at the same moment: its profile, from the same configuration.
      await lxd.send('POST', '/1.0/profiles', { name: PROFILE, ...body }).catch((e: unknown) => {
        if (!alreadyExists(e)) throw e;
      });
    }
  }

  /** Whether new desktops get a GPU: the operator made the GPU profile in the project (looked at once a minute). */
  async function wantsGpu(): Promise<boolean> {
    if (Date.now() - gpuCheckedAt < 60_000) return gpuWanted;
    gpuWanted = await lxd.get(`/1.0/profiles/${GPU_PROFILE}`).then(
      () => true,
      (err: unknown) => {
        if (notFound(err)) return false;
        throw err;
      },
    );
    gpuCheckedAt = Date.now();
    return gpuWanted;
  }

  /** The profiles a new desktop gets. */
  const forNewDesktop = async () => ((await wantsGpu()) ? [PROFILE, GPU_PROFILE] : [PROFILE]);

  return { ensure, wantsGpu, forNewDesktop };
}
