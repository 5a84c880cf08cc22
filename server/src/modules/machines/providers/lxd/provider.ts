import { createHash } from 'node:crypto';
import type { Endpoint } from '../endpoint';
import { rfbAnswers } from '../rfb';
import type { MachineProvider, ObservedDesktop } from '../types';
import { LxdError, type LxdClient } from './client';
import { perKeySerial } from '../serial';
import { socketInInstance } from './exec-stream';
import { createLxdFiles } from './files';

export interface LxdProviderOptions {
  lxd: LxdClient;
  /** The storage pool for root disks and homes (btrfs: it enforces volume quotas). */
  pool: string;
  /** The managed bridge the desktops' NICs join (its ACLs decide their egress). */
  network: string;
  /** The desktop image's alias (machine-image/build.sh). */
  image: string;
  limits: { cpus: number; memoryMb: number; pids: number; diskMb: number; rootMb: number };
  log?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
}

export const PROFILE = 'hyperdesk-desktop';
const ID = /^[A-Za-z0-9-]{1,60}$/;
const HOME_KEY = /^[A-Za-z0-9_-]{1,140}$/;
const VNC_SOCKET = '/run/hyperdesk/vnc.sock';
const AGENT_SOCKET = '/run/hyperdesk/agent.sock';
/** A desktop whose VNC server answered once and then stays silent this long is hung. */
const HUNG_AFTER_MS = 30_000;

/** The instance of a machine: `hd-<machineId>` in the deployment's own project. */
export const instanceOf = (machineId: string) => {
  if (!ID.test(machineId)) throw new Error(`invalid machine id ${JSON.stringify(machineId)}`);
  return `hd-${machineId}`;
};
/** A home's custom volume: named by a hash of its key (keys can be longer than a volume name), the key as its description. */
export const volumeOf = (homeKey: string) => {
  if (!HOME_KEY.test(homeKey)) throw new Error(`invalid home key ${JSON.stringify(homeKey)}`);
  return `home-${createHash('sha256').update(homeKey).digest('hex').slice(0, 32)}`;
};

interface InstanceInfo {
  name: string;
  status: string;
  config: Record<string, string>;
  devices: Record<string, Record<string, string>>;
}

const notFound = (err: unknown) => err instanceof LxdError && err.status === 404;
/** A delete of something already gone is done. */
const ignoreMissing = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => {
      if (!notFound(err)) throw err;
    },
  );

/**
 * Machines as LXD (or Incus) system containers: one instance per machine from the desktop image, with the
 * deployment's profile (limits, isolated id map, no nesting, a NIC on the managed bridge), its home a custom
 * volume per home key with a filesystem quota. The server talks only to the engine's API, with a certificate
 * restricted to its own project: two deployments on one host (or cluster) never see each other's machines, and
 * the server needs no privilege on any host. VNC and the streaming agent are reached through the API's exec
 * channel, as the desktop's user inside the instance.
 */
export function createLxdProvider(opts: LxdProviderOptions): MachineProvider {
  const { lxd } = opts;
  const serialized = perKeySerial();
  const silentFrom = new Map<string, number>();
  const seenUp = new Set<string>();
  let profileReady: Promise<void> | null = null;

  /** The deployment's profile, written from this configuration at the first start (a restart applies new limits). */
  function ensureProfile(): Promise<void> {
    profileReady ??= (async () => {
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
        if (!notFound(err)) throw err;
        await lxd.send('POST', '/1.0/profiles', { name: PROFILE, ...body });
      }
    })().catch((err: unknown) => {
      profileReady = null;
      throw err;
    });
    return profileReady;
  }

  async function ensureVolume(homeKey: string): Promise<string> {
    const name = volumeOf(homeKey);
    try {
      await lxd.send('POST', `/1.0/storage-pools/${opts.pool}/volumes/custom`, { name, description: homeKey, config: { size: `${opts.limits.diskMb}MB` } });
    } catch (err) {
      if (!(err instanceof LxdError && err.status === 409) && !/already exists/i.test((err as Error).message)) throw err;
    }
    return name;
  }

  async function instance(machineId: string): Promise<InstanceInfo | null> {
    try {
      return await lxd.get<InstanceInfo>(`/1.0/instances/${instanceOf(machineId)}`);
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  async function status(machineId: string): Promise<{ status: string } | null> {
    try {
      return await lxd.get<{ status: string }>(`/1.0/instances/${instanceOf(machineId)}/state`);
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  const homeDevice = (volume: string) => ({ type: 'disk', pool: opts.pool, source: volume, path: '/home/user' });

  async function create(machineId: string, name: string, homeKey: string, volume: string): Promise<void> {
    await lxd.send('POST', '/1.0/instances', {
      name: instanceOf(machineId),
      type: 'container',
      profiles: [PROFILE],
      source: { type: 'image', alias: opts.image },
      config: { 'user.hyperdesk.name': name, 'user.hyperdesk.home': homeKey },
      devices: { home: homeDevice(volume) },
    });
  }

  /** A stopped instance takes the name and home it should have now (a seat that moved to another student). */
  async function update(machineId: string, inst: InstanceInfo, name: string, homeKey: string, volume: string): Promise<void> {
    const config = { ...inst.config };
    delete config['user.hyperdesk.stop_reason'];
    const same = inst.config['user.hyperdesk.name'] === name && inst.config['user.hyperdesk.home'] === homeKey && inst.devices.home?.source === volume && !inst.config['user.hyperdesk.stop_reason'];
    if (same) return;
    const keep = Object.fromEntries(Object.entries(config).filter(([k]) => !k.startsWith('volatile.') && !k.startsWith('image.')));
    await lxd.send('PATCH', `/1.0/instances/${instanceOf(machineId)}`, {
      config: { ...keep, 'user.hyperdesk.name': name, 'user.hyperdesk.home': homeKey, 'user.hyperdesk.stop_reason': '' },
      devices: { ...inst.devices, home: homeDevice(volume) },
    });
  }

  async function setState(machineId: string, action: 'start' | 'stop'): Promise<void> {
    try {
      await lxd.send('PUT', `/1.0/instances/${instanceOf(machineId)}/state`, { action, force: action === 'stop', timeout: 10 });
    } catch (err) {
      if (notFound(err)) return;
      const msg = (err as Error).message;
      if (action === 'start' && /already running/i.test(msg)) return;
      if (action === 'stop' && /already stopped|not running/i.test(msg)) return;
      throw err;
    }
  }

  async function stopWithReason(machineId: string, reason: string): Promise<void> {
    opts.log?.warn({ machineId, reason }, 'stopping a machine');
    await setState(machineId, 'stop');
    await lxd.send('PATCH', `/1.0/instances/${instanceOf(machineId)}`, { config: { 'user.hyperdesk.stop_reason': reason } }).catch(() => undefined);
    seenUp.delete(machineId);
    silentFrom.delete(machineId);
  }

  const endpointIn = (machineId: string, socket: string): Endpoint => ({
    ref: { instance: instanceOf(machineId), project: lxd.project, socket },
    open: () => socketInInstance(lxd, instanceOf(machineId), socket),
  });

  return {
    kind: 'lxd',

    async preflight() {
      try {
        await lxd.get(`/1.0/images/aliases/${opts.image}`);
        return null;
      } catch (err) {
        if (notFound(err)) return `The desktop image "${opts.image}" is not in LXD yet (machine-image/build.sh makes it).`;
        return `LXD is not reachable: ${(err as Error).message}`;
      }
    },

    start: ({ machineId, name, homeKey }) =>
      serialized(machineId, async () => {
        const key = homeKey ?? machineId;
        await ensureProfile();
        const volume = await ensureVolume(key);
        const inst = await instance(machineId);
        if (!inst) await create(machineId, name, key, volume);
        else if (inst.status === 'Running') return; // running or coming up: adopt it
        else await update(machineId, inst, name, key, volume);
        seenUp.delete(machineId);
        silentFrom.delete(machineId);
        await setState(machineId, 'start');
      }),

    async describe(machineId): Promise<ObservedDesktop> {
      const s = await status(machineId);
      if (!s || s.status !== 'Running') {
        if (!s) return { state: 'stopped' };
        const reason = (await instance(machineId))?.config['user.hyperdesk.stop_reason'];
        return reason ? { state: 'stopped', reason } : { state: 'stopped' };
      }
      const endpoint = endpointIn(machineId, VNC_SOCKET);
      if (await rfbAnswers(endpoint, 3000)) {
        seenUp.add(machineId);
        silentFrom.delete(machineId);
        return { state: 'running', endpoint, agent: endpointIn(machineId, AGENT_SOCKET), answered: true };
      }
      if (seenUp.has(machineId)) {
        const since = silentFrom.get(machineId);
        if (since === undefined) silentFrom.set(machineId, Date.now());
        else if (Date.now() - since > HUNG_AFTER_MS) {
          const reason = 'The desktop stopped responding, so the machine was stopped.';
          await serialized(machineId, () => stopWithReason(machineId, reason));
          return { state: 'stopped', reason };
        }
      }
      return { state: 'starting', endpoint };
    },

    stop: (machineId) =>
      serialized(machineId, async () => {
        seenUp.delete(machineId);
        silentFrom.delete(machineId);
        await setState(machineId, 'stop');
      }),

    destroy: (machineId) =>
      serialized(machineId, async () => {
        await setState(machineId, 'stop');
        await ignoreMissing(lxd.send('DELETE', `/1.0/instances/${instanceOf(machineId)}`));
        await ignoreMissing(lxd.send('DELETE', `/1.0/storage-pools/${opts.pool}/volumes/custom/${volumeOf(machineId)}`));
      }),

    reset: (machineId, { homeKey, eraseHome }) =>
      serialized(machineId, async () => {
        seenUp.delete(machineId);
        silentFrom.delete(machineId);
        await setState(machineId, 'stop');
        // The root disk goes with the instance; the next start makes a new one from the image.
        await ignoreMissing(lxd.send('DELETE', `/1.0/instances/${instanceOf(machineId)}`));
        if (eraseHome) await ignoreMissing(lxd.send('DELETE', `/1.0/storage-pools/${opts.pool}/volumes/custom/${volumeOf(homeKey)}`));
      }),

    async removeHome(homeKey) {
      await ignoreMissing(lxd.send('DELETE', `/1.0/storage-pools/${opts.pool}/volumes/custom/${volumeOf(homeKey)}`));
    },

    files: createLxdFiles(lxd, instanceOf, async (machineId) => (await instance(machineId))?.devices.home?.source ?? null, opts.pool),

    async list() {
      const all = await lxd.get<{ name: string; status: string }[]>('/1.0/instances?recursion=1');
      return all.filter((i) => i.name.startsWith('hd-') && i.status !== 'Stopped').map((i) => i.name.slice(3));
    },
  };
}
