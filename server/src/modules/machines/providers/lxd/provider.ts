import type { Endpoint } from '../endpoint';
import { rfbAnswers } from '../rfb';
import type { MachineProvider, ObservedDesktop } from '../types';
import { alreadyExists, at, busy, ignoreMissing, notFound, type LxdClient } from './client';
import { perKeySerial } from '../serial';
import { socketInInstance } from './exec-stream';
import { createLxdFiles } from './files';
import { createDesktopLinks, type LinkSocket } from './link';
import { createCluster, currentOf, instanceName, parseInstance, staleOf } from './cluster';
import { createProfiles, GPU_PROFILE } from './profile';
import { createStorage, volumeOf, type Devices } from './storage';

export { PROFILE } from './profile';
export { volumeOf } from './storage';

export interface LxdProviderOptions {
  lxd: LxdClient;
  /** The storage pool for root disks and homes (btrfs: it enforces volume quotas). */
  pool: string;
  /** The managed bridge the desktops' NICs join (its ACLs decide their egress). */
  network: string;
  /** The desktop image's alias (machine-image/build.sh). */
  image: string;
  /**
   * The project's volume holding that image's /usr (host-setup.sh), mounted read-only over each new desktop's own: the
   * desktops then share one copy of their programs in memory. A desktop keeps the one it was made with.
   */
  usrVolume?: string;
  limits: { cpus: number; memoryMb: number; pids: number; diskMb: number; rootMb: number };
  log?: { info(o: object, msg: string): void; warn(o: object, msg: string): void };
}

/** The stop reasons of a machine whose cluster member went away (the dashboard shows them). */
export const HOST_LOST = 'The host this machine ran on went offline, so it stopped. Start runs it on another host with an empty home folder; the files of the old one are kept on that host for support to recover.';
export const HOST_LOST_SHARED = 'The host this machine ran on went offline, so it stopped. Start runs it on another host, with your files.';
const ID = /^[A-Za-z0-9-]{1,60}$/;
const VNC_SOCKET = '/run/hyperdesk/vnc.sock';
const AGENT_SOCKET = '/run/hyperdesk/agent.sock';
/** The numbers the desktop's end of a link knows the sockets by (./link-script.ts). */
const LINKED: Record<string, LinkSocket> = { [VNC_SOCKET]: 1, [AGENT_SOCKET]: 2 };
/** A desktop whose VNC server answered once and then stays silent this long is hung. */
const HUNG_AFTER_MS = 30_000;
/** A desktop started and not yet answering is looked up at most this often (its link tells when it answers). */
const LOOK_WHILE_STARTING_MS = 1_000;

/** The instance of a machine: `hd-<machineId>` in the deployment's own project. */
export const instanceOf = (machineId: string) => {
  if (!ID.test(machineId)) throw new Error(`invalid machine id ${JSON.stringify(machineId)}`);
  return `hd-${machineId}`;
};

interface InstanceInfo {
  name: string;
  status: string;
  location?: string;
  config: Record<string, string>;
  devices: Devices;
}

/** What a machine's desktop is given: its name (the window title, the panel), whose home it has, and its clock's zone. */
interface Wanted {
  machineName: string;
  homeKey: string;
  timeZone: string;
}

/** A zone the desktop's C library reads from its tzdata (an IANA name Node knows too), else UTC. */
export function desktopTimeZone(zone: string | undefined): string {
  if (!zone || !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone)) return 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

const wantedOf = (m: { machineId: string; name: string; homeKey?: string; timeZone?: string }): Wanted => ({
  machineName: m.name,
  homeKey: m.homeKey ?? m.machineId,
  timeZone: desktopTimeZone(m.timeZone),
});

/**
 * The instance's own keys: the name and home (read by its init through the guest API and by this server), and TZ in
 * its init's environment (LXD's `environment.*`), which hands it to the desktop session: its clock and programs.
 */
const configOf = (w: Wanted): Record<string, string> => ({
  'user.hyperdesk.name': w.machineName,
  'user.hyperdesk.home': w.homeKey,
  'environment.TZ': w.timeZone,
});

/** How long a start waits for an instance's running operation (a create from the image: seconds on a busy host). */
const BUSY_WAIT_MS = 120_000;

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
  /**
   * Each running desktop's link (./link.ts): viewers' streams go through it, and a look at an online desktop reads
   * its health instead of probing through an exec.
   */
  const changeListeners: (() => void)[] = [];
  /** Instances started and not yet answering: their first answer is news (once per start, whatever the tenant sends). */
  const awaitingUp = new Set<string>();
  /**
   * When each of those was last looked up. Its link tells the moment it answers, so until then a look a second
   * is enough: every GET of an instance takes LXD's one database connection, which 40 starting desktops need.
   */
  const lookedAt = new Map<string, number>();
  /** An instance no longer awaited: it answered, stopped or is being stopped. True when it was awaited. */
  const notAwaited = (name: string) => {
    lookedAt.delete(name);
    return awaitingUp.delete(name);
  };
  const links = createDesktopLinks(lxd, (instance) => {
    if (notAwaited(instance)) changeListeners.forEach((l) => l());
  });
  const cluster = createCluster(lxd, GPU_PROFILE, opts.pool);
  /** A machine's instance now (a cluster can have replaced `hd-<id>` after losing its member); filled by lookups. */
  const names = new Map<string, string>();
  const removing = new Set<string>();
  const profiles = createProfiles(lxd, opts);
  const storage = createStorage(lxd, cluster, opts);
  const { poolIsShared, ensureVolume, homeFor, deleteVolume } = storage;

  /** The machine's instance name: `hd-<id>` on one host; in a cluster the highest generation (looked up when asked). */
  async function current(machineId: string, fresh = false): Promise<string> {
    const first = instanceOf(machineId);
    if (!(await cluster.isClustered())) return first;
    const known = names.get(machineId);
    if (known && !fresh) return known;
    const urls = await lxd.get<string[]>('/1.0/instances');
    const name = currentOf(machineId, urls.map((u) => decodeURIComponent(u.split('/').pop()!.split('?')[0]!)))?.name ?? first;
    names.set(machineId, name);
    return name;
  }
  const nameOf = (machineId: string) => names.get(machineId) ?? instanceOf(machineId);

  /** True when the instance lives on a cluster member that is offline (its calls fail; its desktop is gone). */
  async function onLostMember(name: string): Promise<boolean> {
    if (!(await cluster.isClustered())) return false;
    const [insts, members] = await Promise.all([cluster.instances(), cluster.members()]);
    const loc = insts.find((i) => i.name === name)?.location;
    return !!loc && members.some((m) => m.name === loc && !m.online);
  }

  async function instance(name: string): Promise<InstanceInfo | null> {
    try {
      return await lxd.get<InstanceInfo>(`/1.0/instances/${name}`);
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  }

  /** Running, Stopped, Error: the instance's own record says it (its /state also gathers usage figures: twice LXD's work). */
  const status = (name: string): Promise<{ status: string } | null> => instance(name);

  async function create(name: string, want: Wanted, volume: string, target = ''): Promise<void> {
    const root = await storage.rootFor(target);
    await lxd.send('POST', `/1.0/instances${at(target)}`, {
      name,
      type: 'container',
      profiles: await profiles.forNewDesktop(),
      source: { type: 'image', alias: root.image },
      config: configOf(want),
      devices: { home: storage.homeDevice(volume), ...root.devices },
    });
  }

  /** A stopped instance takes the name, home and clock it should have now (a seat that moved to another student). */
  async function update(name: string, inst: InstanceInfo, want: Wanted, volume: string): Promise<void> {
    const config = { ...inst.config };
    delete config['user.hyperdesk.stop_reason'];
    // A /usr from a host path (how desktops on Incus shared it before the volume) is no longer allowed: the desktop
    // goes back to its own, which is the same image's.
    const hostUsr = !!inst.devices.usr && !inst.devices.usr.pool;
    const same = Object.entries(configOf(want)).every(([k, v]) => inst.config[k] === v) && inst.devices.home?.source === volume && !inst.config['user.hyperdesk.stop_reason'] && !hostUsr;
    if (same) return;
    const keep = Object.fromEntries(Object.entries(config).filter(([k]) => !k.startsWith('volatile.') && !k.startsWith('image.')));
    const devices: Devices = { ...inst.devices, home: storage.homeDevice(volume) };
    if (hostUsr) delete devices.usr;
    await lxd.send('PATCH', `/1.0/instances/${name}`, {
      config: { ...keep, ...configOf(want), 'user.hyperdesk.stop_reason': '' },
      devices,
    });
  }

  async function setState(name: string, action: 'start' | 'stop'): Promise<void> {
    if (action === 'stop') {
      notAwaited(name);
      links.drop(name); // a viewer's way in is no longer taken at the link's word (endpoints)
    }
    try {
      await lxd.send('PUT', `/1.0/instances/${name}/state`, { action, force: action === 'stop', timeout: 10 });
    } catch (err) {
      if (notFound(err)) return;
      const msg = (err as Error).message;
      if (action === 'start' && /already running/i.test(msg)) return;
      if (action === 'stop' && /already stopped|not running/i.test(msg)) return;
      // A desktop on a lost member is not running anywhere we can reach: stopped, as far as this machine goes.
      if (action === 'stop' && (await onLostMember(name).catch(() => false))) return;
      throw err;
    }
  }

  /** Deletes an instance (a lost member's record cannot be deleted until the member is back: it stays, replaced). */
  async function remove(name: string): Promise<void> {
    await setState(name, 'stop');
    try {
      await ignoreMissing(lxd.send('DELETE', `/1.0/instances/${name}`));
    } catch (err) {
      if (!(await onLostMember(name).catch(() => false))) throw err;
    }
  }

  async function stopWithReason(machineId: string, reason: string): Promise<void> {
    opts.log?.warn({ machineId, reason }, 'stopping a machine');
    const name = await current(machineId);
    await setState(name, 'stop');
    await lxd.send('PATCH', `/1.0/instances/${name}`, { config: { 'user.hyperdesk.stop_reason': reason } }).catch(() => undefined);
    seenUp.delete(machineId);
    silentFrom.delete(machineId);
  }

  /** A viewer's way to a socket: through the desktop's link, or an exec of its own while it has no live link. */
  const endpointIn = (name: string, socket: string, wait = false): Endpoint => ({
    ref: { instance: name, project: lxd.project, socket },
    open: () => links.open(name, LINKED[socket]!, wait) ?? socketInInstance(lxd, name, socket, wait),
  });
  /** The health probe's way: always an exec, so a link the tenant stalled never makes its desktop look hung. */
  const probeIn = (name: string): Endpoint => ({
    ref: { instance: name, project: lxd.project, socket: VNC_SOCKET },
    open: () => socketInInstance(lxd, name, VNC_SOCKET),
  });

  /**
   * A start, tried again while its instance is busy with another operation (its create, when the server that began
   * it was killed and this one took over): both ways of starting read the instance afresh each time.
   */
  async function whenNotBusy(machineId: string, startIt: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + BUSY_WAIT_MS;
    for (;;) {
      try {
        return await startIt();
      } catch (err) {
        if (!busy(err) || Date.now() > deadline) throw err;
        opts.log?.info({ machineId }, 'the desktop is busy with another operation: starting it once that is done');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** One host: the instance `hd-<id>`, its home volume beside it. */
  async function startOnHost(machineId: string, want: Wanted): Promise<void> {
    const name = instanceOf(machineId);
    const inst = await instance(name);
    if (inst?.status === 'Running') return; // running or coming up: adopt it
    await makeOnHost(name, inst, want);
    await setState(name, 'start');
  }

  /**
   * One host: the desktop made from the image with its home (a new machine, or after a reset), or a stopped one given
   * the name, home and clock zone it should have now. Made, or being made, by another server meanwhile (a leader that
   * took over) counts as made: LXD refuses the second create, and a start then waits for the first (whenNotBusy).
   */
  async function makeOnHost(name: string, inst: InstanceInfo | null, want: Wanted): Promise<void> {
    const volume = await homeFor(inst, want.homeKey);
    if (inst) return update(name, inst, want, volume);
    await create(name, want, volume).catch((err: unknown) => {
      if (!alreadyExists(err) && !busy(err)) throw err;
    });
  }

  /**
   * A cluster: an instance on a live member starts where it is (its root disk is there). A new one (first start,
   * after a reset, or replacing one whose member was lost) goes where its home is on a local pool, else where
   * capacity is free; a home only on a lost member is begun afresh on the new member (docs/providers.md).
   */
  async function startInCluster(machineId: string, want: Wanted): Promise<void> {
    const key = want.homeKey;
    const [insts, members, shared] = await Promise.all([cluster.instances(), cluster.members(), poolIsShared()]);
    const online = new Set(members.filter((m) => m.online).map((m) => m.name));
    const cur = currentOf(machineId, insts.map((i) => i.name));
    const inst = cur ? insts.find((i) => i.name === cur.name)! : null;
    const homes = shared ? [] : (await cluster.volumeMembers(opts.pool, volumeOf(key))).filter((m) => online.has(m));
    let gen = cur?.gen ?? 0;
    if (cur && inst && online.has(inst.location)) {
      names.set(machineId, cur.name);
      if (inst.status === 'Running') return;
      if (!homes.length || homes.includes(inst.location)) {
        const info = await instance(cur.name);
        if (info) {
          const volume = await homeFor(info, key, shared ? '' : inst.location);
          await update(cur.name, info, want, volume);
          await setState(cur.name, 'start');
          return;
        }
      } else {
        // The seat's new student has a home on another member: the desktop is rebuilt from the image there.
        await remove(cur.name);
      }
    } else if (cur) {
      gen = cur.gen + 1; // its member is lost: a new generation elsewhere
    }
    const name = instanceName(machineId, gen);
    const room = { cpus: opts.limits.cpus, memoryBytes: opts.limits.memoryMb * 1_000_000, gpu: await profiles.wantsGpu(), pin: homes[0] };
    const { placement, done } = await cluster.reserve(room);
    try {
      if ('error' in placement) throw new Error(placement.error);
      opts.log?.info({ machineId, instance: name, member: placement.member }, 'placing a desktop');
      const volume = await ensureVolume(key, shared ? '' : placement.member);
      await create(name, want, volume, placement.member);
    } finally {
      done();
    }
    names.set(machineId, name);
    await setState(name, 'start');
  }

  /** Instances a newer generation replaced, on members that are back: deleted (their machine runs elsewhere). */
  function cleanStale(all: { name: string; status: string }[]): void {
    for (const name of staleOf(all.map((i) => i.name))) {
      if (removing.has(name) || all.find((i) => i.name === name)?.status === 'Error') continue;
      removing.add(name);
      opts.log?.info({ instance: name }, 'deleting an instance a newer one replaced (its member is back)');
      void remove(name)
        .catch((err: unknown) => opts.log?.warn({ err, instance: name }, 'deleting a replaced instance failed; retried later'))
        .finally(() => removing.delete(name));
    }
  }

  return {
    kind: 'lxd',
    onChange: (listener) => void changeListeners.push(listener),

    async preflight() {
      try {
        await lxd.get(`/1.0/images/aliases/${opts.image}`);
        return null;
      } catch (err) {
        if (notFound(err)) return `The desktop image "${opts.image}" is not in LXD yet (machine-image/build.sh makes it).`;
        return `LXD is not reachable: ${(err as Error).message}`;
      }
    },

    start: (m) =>
      serialized(m.machineId, async () => {
        const { machineId } = m;
        await profiles.ensure();
        seenUp.delete(machineId);
        silentFrom.delete(machineId);
        const clustered = await cluster.isClustered();
        await whenNotBusy(machineId, () => (clustered ? startInCluster : startOnHost)(machineId, wantedOf(m)));
        // Its link, at once: it tells when VNC first answers, so the looks until then cost no exec.
        const started = await current(machineId);
        awaitingUp.add(started);
        links.ensure(started);
      }),

    prepare: (m) =>
      serialized(m.machineId, async () => {
        // In a cluster a new desktop goes where capacity is free when it starts (startInCluster): not placed ahead.
        if (await cluster.isClustered()) return;
        const instanceName = instanceOf(m.machineId);
        if (await instance(instanceName)) return;
        await profiles.ensure();
        await makeOnHost(instanceName, null, wantedOf(m));
      }),

    async endpoints(machineId) {
      let name = await current(machineId);
      // A link that spoke lately is a program running inside the instance, so the instance runs: LXD is not asked
      // (a class connecting at once asked it once per student, each queued behind LXD's one database connection).
      if (links.health(name) === null) {
        let s = await status(name).catch(() => null);
        if (!s && names.has(machineId)) s = await status((name = await current(machineId, true))).catch(() => null);
        if (s?.status !== 'Running') return null;
      }
      // Not probed: the connection waits inside for a socket about to appear (the agent's, right after start).
      return { endpoint: endpointIn(name, VNC_SOCKET, true), agent: endpointIn(name, AGENT_SOCKET, true) };
    },

    async describe(machineId): Promise<ObservedDesktop> {
      let name = await current(machineId);
      if (awaitingUp.has(name)) {
        if (Date.now() - (lookedAt.get(name) ?? 0) < LOOK_WHILE_STARTING_MS) return { state: 'starting', endpoint: endpointIn(name, VNC_SOCKET) };
        lookedAt.set(name, Date.now());
      }
      let s: { status: string } | null;
      try {
        s = await status(name);
        if (!s && names.has(machineId)) s = await status((name = await current(machineId, true)));
      } catch (err) {
        if (!(await onLostMember(name))) throw err;
        const fresh = await current(machineId, true);
        if (fresh === name) {
          seenUp.delete(machineId);
          silentFrom.delete(machineId);
          return { state: 'stopped', reason: (await poolIsShared()) ? HOST_LOST_SHARED : HOST_LOST, lost: true };
        }
        s = await status((name = fresh));
      }
      if (!s || s.status !== 'Running') {
        links.drop(name);
        notAwaited(name);
        if (!s) return { state: 'stopped' };
        const reason = (await instance(name))?.config['user.hyperdesk.stop_reason'];
        return reason ? { state: 'stopped', reason } : { state: 'stopped' };
      }
      const endpoint = endpointIn(name, VNC_SOCKET);
      const health = links.health(name);
      // A desktop coming up is taken at its link's word ("down": no exec); whether a desktop that was up hung is
      // always decided by an exec probe, which the tenant cannot answer for it.
      const coming = health === 'down' && !seenUp.has(machineId);
      if (health === 'up' || (!coming && (await rfbAnswers(probeIn(name), 3000)))) {
        seenUp.add(machineId);
        silentFrom.delete(machineId);
        links.ensure(name);
        return { state: 'running', endpoint, agent: endpointIn(name, AGENT_SOCKET), answered: true };
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
        await setState(await current(machineId), 'stop');
      }),

    destroy: (machineId) =>
      serialized(machineId, async () => {
        await remove(await current(machineId));
        await deleteVolume(machineId);
      }),

    reset: (machineId, { homeKey, eraseHome }) =>
      serialized(machineId, async () => {
        seenUp.delete(machineId);
        silentFrom.delete(machineId);
        // The root disk goes with the instance; the next start makes a new one from the image.
        await remove(await current(machineId));
        if (eraseHome) await deleteVolume(homeKey);
      }),

    async removeHome(homeKey) {
      await deleteVolume(homeKey);
    },

    files: createLxdFiles(lxd, nameOf, async (machineId) => (await instance(await current(machineId)))?.devices.home?.source ?? null, opts.pool),

    async list() {
      const all = await lxd.get<{ name: string; status: string }[]>('/1.0/instances?recursion=1');
      const stale = new Set(staleOf(all.map((i) => i.name)));
      if (stale.size) cleanStale(all);
      // Not stopped and reachable: an instance on a lost member answers 'Error' (marked by describe, not an orphan).
      const live = all.filter((i) => !stale.has(i.name) && i.status !== 'Stopped' && i.status !== 'Error');
      return live.flatMap((i) => {
        const p = parseInstance(i.name);
        if (!p) return [];
        names.set(p.machineId, i.name);
        return [p.machineId];
      });
    },

    fleet: () => cluster.fleet(),
  };
}
