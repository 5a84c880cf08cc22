import { createHash } from 'node:crypto';
import { alreadyExists, at, ignoreMissing, notFound, type LxdClient } from './client';
import type { Cluster } from './cluster';

const HOME_KEY = /^[A-Za-z0-9_-]{1,140}$/;

/** A home's custom volume: named by a hash of its key (keys can be longer than a volume name), the key as its description. */
export const volumeOf = (homeKey: string) => {
  if (!HOME_KEY.test(homeKey)) throw new Error(`invalid home key ${JSON.stringify(homeKey)}`);
  return `home-${createHash('sha256').update(homeKey).digest('hex').slice(0, 32)}`;
};

export type Devices = Record<string, Record<string, string>>;

export interface StorageOptions {
  /** The storage pool for root disks and homes (btrfs: it enforces volume quotas). */
  pool: string;
  /** The desktop image's alias (machine-image/build.sh). */
  image: string;
  /** The project's volume holding that image's /usr (host-setup.sh), mounted read-only over each new desktop's own. */
  usrVolume?: string;
  limits: { diskMb: number };
  log?: { warn(o: object, msg: string): void };
}

/**
 * A desktop's disks: its home, a custom volume per home key with the deployment's quota (one per member on a local
 * pool of a cluster), and its root, made from the image and sharing the image's /usr where the member has it.
 */
export function createStorage(lxd: LxdClient, cluster: Cluster, opts: StorageOptions) {
  let sharedPool: Promise<boolean> | null = null;
  /** The members whose shared /usr volume host-setup.sh has filled (it runs on each; a member without one is skipped). */
  const usrReadyOn = new Set<string>();
  /** The image without a /usr of its own (machine-image/build.sh makes it beside the image), once looked up. */
  let sharedUsrImage: Promise<string | null> | null = null;

  /** A pool every member reaches (Ceph): homes follow the desktop to any member. */
  const poolIsShared = () =>
    (sharedPool ??= lxd.get<{ driver: string }>(`/1.0/storage-pools/${opts.pool}`).then(
      (p) => ['ceph', 'cephfs', 'cephobject'].includes(p.driver),
      () => {
        sharedPool = null;
        return false;
      },
    ));

  /** The home volume on `target` (a member of a cluster with a local pool; '' elsewhere). */
  async function ensureVolume(homeKey: string, target = ''): Promise<string> {
    const name = volumeOf(homeKey);
    try {
      await lxd.send('POST', `/1.0/storage-pools/${opts.pool}/volumes/custom${at(target)}`, { name, description: homeKey, config: { size: `${opts.limits.diskMb}MB` } });
    } catch (err) {
      if (!alreadyExists(err)) throw err;
    }
    return name;
  }

  /**
   * The home volume for an instance about to start: the one it mounts already (LXD keeps a volume in use, so it
   * exists), else asked for. Asking again costs the daemon a look at every instance of the project, on its one
   * database connection, for each start of a class.
   */
  function homeFor(inst: { devices: Devices } | null, homeKey: string, target = ''): Promise<string> {
    const name = volumeOf(homeKey);
    return inst?.devices.home?.source === name ? Promise.resolve(name) : ensureVolume(homeKey, target);
  }

  /** Deletes a home volume wherever a copy is (one per member on a local pool); copies on a lost member stay. */
  async function deleteVolume(homeKey: string): Promise<void> {
    const name = volumeOf(homeKey);
    const where = (await cluster.isClustered()) ? await cluster.volumeMembers(opts.pool, name) : [''];
    for (const member of where) {
      await ignoreMissing(lxd.send('DELETE', `/1.0/storage-pools/${opts.pool}/volumes/custom/${name}${at(member)}`)).catch((err: unknown) =>
        opts.log?.warn({ err, volume: name, member }, 'a home volume could not be deleted (its member is offline?)'),
      );
    }
  }

  const homeDevice = (volume: string) => ({ type: 'disk', pool: opts.pool, source: volume, path: '/home/user' });

  /**
   * A new desktop's root on `target`: with the shared /usr where that member has it, made from the image without a /usr
   * of its own (its first start then remaps a tenth of the files: LXD 5.0 remaps every file of a new root); otherwise
   * the whole image.
   */
  async function rootFor(target: string): Promise<{ image: string; devices: Devices }> {
    const whole = { image: opts.image, devices: {} };
    const source = opts.usrVolume;
    if (!source || !(await usrReadyAt(source, target))) return whole;
    const alias = `${opts.image}-shared-usr`;
    sharedUsrImage ??= lxd.get(`/1.0/images/aliases/${alias}`).then(
      () => alias,
      (err: unknown) => {
        if (notFound(err)) return null;
        sharedUsrImage = null;
        throw err;
      },
    );
    const usr = { type: 'disk', pool: opts.pool, source, path: '/usr', readonly: 'true' };
    return { image: (await sharedUsrImage) ?? opts.image, devices: { usr } };
  }

  /** Whether host-setup.sh has filled the shared /usr volume on `target` (remembered once it has). */
  async function usrReadyAt(source: string, target: string): Promise<boolean> {
    if (usrReadyOn.has(target)) return true;
    const vol = await lxd.get<{ config?: Record<string, string> }>(`/1.0/storage-pools/${opts.pool}/volumes/custom/${source}${at(target)}`).catch(() => null);
    if (vol?.config?.['user.hyperdesk.ready'] !== 'true') {
      opts.log?.warn({ volume: source, member: target || undefined }, 'no shared /usr there: the new desktop keeps its own');
      return false;
    }
    usrReadyOn.add(target);
    return true;
  }

  return { poolIsShared, ensureVolume, homeFor, deleteVolume, homeDevice, rootFor };
}
