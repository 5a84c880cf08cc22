import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLxdClient, type LxdClient } from '../src/modules/machines/providers/lxd/client';
import { lxdProjectFor } from '../src/config';
import { prepareLxd, removeProject } from './lxd-fixtures';

const run = promisify(execFile);
/** Names no one else on this machine uses: two network namespaces, the host's bridge between them, their subnet. */
const NS = ['hdct-a', 'hdct-b'] as const;
const BRIDGE = 'hdctbr';
const SUBNET = '10.253.47';
const STATE = '/run/hyperdesk-cluster-test.json';
export const CLUSTER_PROJECT = 'hdct';
export const CLUSTER_NETWORK = 'hdctnet';
export const CLUSTER_POOL = 'hyperdesk';
/** The image's alias inside the test cluster (the host's is hyperdesk-desktop-<recipe>: machine-image/build.sh). */
const IMAGE = 'hyperdesk-desktop';
/** The host's desktop image for this checkout, made as npm start makes it (a first test on a fresh host builds it). */
async function hostImage(): Promise<string> {
  const dataDir = mkdtempSync('/var/tmp/hdct-setup-');
  try {
    return (await prepareLxd(dataDir)).LXD_IMAGE!;
  } finally {
    removeProject(lxdProjectFor(dataDir));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export interface TestCluster {
  /** The members' names: hdct-a (bootstrap) and hdct-b. */
  members: readonly [string, string];
  /** A client with a certificate restricted to the test project, as npm start trusts the server's. */
  lxd: LxdClient;
  /** `lxc` as the cluster's administrator (through member a's own socket). */
  lxc(args: string[]): Promise<string>;
  /** Where an instance of the test project lives. */
  locationOf(instance: string): Promise<string>;
  /** The host of member b goes away: its daemon, its containers and every process in its namespace die (kill -9). */
  killMember(name: string): Promise<void>;
  /** The killed member's host is back: its daemon starts again on its own directory and rejoins. */
  reviveMember(name: string): Promise<void>;
  close(): Promise<void>;
}

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const quiet = (cmd: string, args: string[]) => {
  try {
    return sh(cmd, args);
  } catch {
    return '';
  }
};

/** Every process whose network namespace is `ns` (a member's daemon, its container monitors, dnsmasq). */
const pidsIn = (ns: string) => quiet('ip', ['netns', 'pids', ns]).split('\n').filter(Boolean).map(Number);

/** The processes of the test project's containers (their cgroups are named after project and instance). */
function containerPids(instances: string[]): number[] {
  const pids: number[] = [];
  for (const inst of instances) {
    for (const kind of ['payload', 'monitor']) {
      const dir = `/sys/fs/cgroup/pids/lxc.${kind}.${CLUSTER_PROJECT}_${inst}`;
      if (!existsSync(dir)) continue;
      for (const line of quiet('find', [dir, '-name', 'cgroup.procs']).split('\n').filter(Boolean)) {
        for (const p of readFileSync(line, 'utf8').split('\n').filter(Boolean)) pids.push(Number(p));
      }
    }
  }
  return pids;
}

function killAll(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** Removes everything a (possibly crashed) earlier run made: processes, namespaces, bridge, directories, cgroups. */
export function tearDown(): void {
  let state: { dir?: string; instances?: string[] } = {};
  try {
    state = JSON.parse(readFileSync(STATE, 'utf8')) as typeof state;
  } catch {
    /* nothing recorded */
  }
  const instances = new Set(state.instances ?? []);
  for (const d of readdirSync('/sys/fs/cgroup/pids')) {
    const m = /^lxc\.(?:payload|monitor)\.hdct_(.+)$/.exec(d);
    if (m) instances.add(m[1]!);
  }
  for (let i = 0; i < 50; i++) {
    const left = [...NS.flatMap(pidsIn), ...containerPids([...instances])];
    if (!left.length) break;
    killAll(left);
    quiet('sleep', ['0.1']);
  }
  for (const inst of instances) {
    for (const ctl of readdirSync('/sys/fs/cgroup')) {
      for (const kind of ['payload', 'monitor']) quiet('find', [`/sys/fs/cgroup/${ctl}/lxc.${kind}.${CLUSTER_PROJECT}_${inst}`, '-depth', '-type', 'd', '-exec', 'rmdir', '{}', ';']);
    }
  }
  for (const ns of NS) {
    quiet('ip', ['netns', 'del', ns]);
    quiet('ip', ['link', 'del', `${ns}-h`]);
  }
  quiet('ip', ['link', 'del', BRIDGE]);
  if (state.dir) {
    // The members' mounts live in their own mount namespaces and went with their processes; loop files are freed.
    for (const l of quiet('losetup', ['-a']).split('\n').filter((x) => x.includes(state.dir!))) quiet('losetup', ['-d', l.split(':')[0]!]);
    rmSync(state.dir, { recursive: true, force: true });
  }
  rmSync(STATE, { force: true });
}

function record(dir: string, instances: string[]): void {
  writeFileSync(STATE, JSON.stringify({ dir, instances }));
}

/**
 * `nsenter` arguments that run `command` (a shell line) in network namespace `ns` and a mount namespace of its own:
 * LXD reads network interfaces from /sys, so the namespace gets a sysfs of its own (the cgroup hierarchies moved back
 * under it, through `scratch`), as `ip netns exec` does. A daemon started there keeps both namespaces.
 */
export function inOwnNamespaces(ns: string, scratch: string, command: string): string[] {
  const script = [
    'set -e',
    `mkdir -p ${scratch}/cg`,
    `mount --rbind /sys/fs/cgroup ${scratch}/cg`,
    'mount -t sysfs sysfs /sys',
    `mount --move ${scratch}/cg /sys/fs/cgroup`,
    `exec ${command}`,
  ].join('\n');
  return [`--net=/run/netns/${ns}`, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', script];
}

/**
 * A member's daemon in its own network and mount namespaces (inOwnNamespaces). A member that comes back after all its
 * processes died first loses its helpers' stale pid files, as npm start's daemon.sh does: its daemon would SIGKILL
 * whatever process of the test run now has its dead dnsmasq's pid.
 */
function startDaemon(ns: string, dir: string): void {
  sh('sh', [path.join(import.meta.dirname, '../../scripts/lxd/stale-pids.sh'), dir]);
  const child = spawn('nsenter', inOwnNamespaces(ns, dir, `lxd --group lxd --logfile=${dir}/lxd.log`), {
    env: { ...process.env, LXD_DIR: dir },
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
}

/** The desktop image of the host's daemon, imported into the cluster (its files read in place, else exported). */
async function importImage(root: string, lxcA: (args: string[]) => Promise<string>): Promise<void> {
  const host = await hostImage();
  const fp = JSON.parse(sh('lxc', ['query', `/1.0/images/aliases/${host}`])).target as string;
  let files = [`/var/lib/lxd/images/${fp}`, `/var/lib/lxd/images/${fp}.rootfs`];
  if (!files.every(existsSync)) {
    await run('lxc', ['image', 'export', host, `${root}/image/`], { maxBuffer: 1 << 24 });
    files = readdirSync(`${root}/image`).sort((a) => (a.startsWith('meta-') ? -1 : 1)).map((f) => `${root}/image/${f}`);
  }
  try {
    await lxcA(['image', 'import', ...files, '--alias', IMAGE]);
  } catch (err) {
    // The second member's join can cut the import's event stream on a loaded host ("websocket: close 1006") while
    // the import itself goes on: the image is then there, and only its alias may be missing.
    const there = await lxcA(['image', 'info', fp]).then(() => true, () => false);
    if (!there) throw err;
    if (!(await lxcA(['image', 'info', IMAGE]).then(() => true, () => false))) await lxcA(['image', 'alias', 'create', IMAGE, fp]);
  }
}

/**
 * Two NEW LXD daemons on this one machine, clustered: each with its own LXD_DIR, network namespace (hdct-a at
 * 10.253.47.11, hdct-b at .12) joined to the host by a bridge, a btrfs pool on a loop file, a managed bridge for the
 * desktops, the host's desktop image, and a restricted project with a client certificate trusted for it alone. The
 * host's own LXD daemon is never touched. Everything is removed by close() (or by the next run after a crash).
 */
export async function twoMemberCluster(): Promise<TestCluster> {
  tearDown();
  try {
    return await build();
  } catch (err) {
    tearDown();
    throw err;
  }
}

async function build(): Promise<TestCluster> {
  const root = mkdtempSync('/var/tmp/hdct-');
  chmodSync(root, 0o711); // the containers' root (an unprivileged id) passes through to their rootfs
  record(root, []);
  const dirs = NS.map((ns) => path.join(root, ns.slice(-1)));
  sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  sh('ip', ['addr', 'add', `${SUBNET}.1/24`, 'dev', BRIDGE]);
  sh('ip', ['link', 'set', BRIDGE, 'up']);
  NS.forEach((ns, i) => {
    sh('mkdir', ['-p', dirs[i]!]);
    sh('ip', ['netns', 'add', ns]);
    sh('ip', ['link', 'add', `${ns}-h`, 'type', 'veth', 'peer', 'name', `${ns}-n`]);
    sh('ip', ['link', 'set', `${ns}-h`, 'master', BRIDGE, 'up']);
    sh('ip', ['link', 'set', `${ns}-n`, 'netns', ns]);
    sh('ip', ['-n', ns, 'addr', 'add', `${SUBNET}.${11 + i}/24`, 'dev', `${ns}-n`]);
    sh('ip', ['-n', ns, 'link', 'set', `${ns}-n`, 'up']);
    sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    startDaemon(ns, dirs[i]!);
  });
  const lxcIn = (i: number) => async (args: string[], input?: string) => {
    const p = run('lxc', args, { env: { ...process.env, LXD_DIR: dirs[i] }, maxBuffer: 1 << 24 });
    if (input !== undefined) p.child.stdin!.end(input);
    return (await p).stdout;
  };
  const preseed = async (i: number, yaml: string) => {
    const p = run('nsenter', [`--net=/run/netns/${NS[i]}`, 'lxd', 'init', '--preseed'], { env: { ...process.env, LXD_DIR: dirs[i] } });
    p.child.stdin!.end(yaml);
    await p;
  };
  for (const d of dirs) await run('lxd', ['waitready', '--timeout=60'], { env: { ...process.env, LXD_DIR: d } });
  await preseed(
    0,
    `config:
  core.https_address: ${SUBNET}.11:8443
  cluster.https_address: ${SUBNET}.11:8443
cluster: {server_name: ${NS[0]}, enabled: true}
storage_pools: [{name: ${CLUSTER_POOL}, driver: btrfs, config: {size: 5GiB}}]
networks: [{name: ${CLUSTER_NETWORK}, type: bridge, config: {ipv4.address: 10.253.48.1/24, ipv4.nat: "false", ipv6.address: none}}]
`,
  );
  const lxcA = lxcIn(0);
  // A member is offline after 11 s without a heartbeat (LXD's least; 20 by default). Set once clustered.
  await lxcA(['config', 'set', 'cluster.offline_threshold', '11']);
  const token = (await lxcA(['cluster', 'add', NS[1]])).trim().split('\n').pop()!;
  const imported = importImage(root, lxcA).then(() => true, () => false);
  await preseed(
    1,
    `cluster:
  enabled: true
  server_name: ${NS[1]}
  server_address: ${SUBNET}.12:8443
  cluster_token: ${token}
  member_config: [{entity: storage-pool, name: ${CLUSTER_POOL}, key: size, value: 5GiB}]
`,
  );
  // Imported once more, alone, when the join cut the first try short (its error then says why).
  if (!(await imported)) await importImage(root, lxcA);
  // The project and certificate as scripts/lxd/host-setup.sh makes them (member targeting allowed).
  await lxcA(['project', 'create', CLUSTER_PROJECT, '-c', 'features.images=false', '-c', 'features.profiles=true', '-c', 'features.storage.volumes=true', '-c', 'features.networks=false',
    '-c', 'restricted=true', '-c', 'restricted.containers.nesting=block', '-c', 'restricted.containers.privilege=isolated', '-c', 'restricted.containers.lowlevel=block',
    '-c', 'restricted.devices.disk=managed', '-c', 'restricted.devices.nic=managed', '-c', `restricted.networks.access=${CLUSTER_NETWORK}`, '-c', 'restricted.devices.gpu=allow',
    '-c', 'restricted.cluster.target=allow']);
  sh('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:secp384r1', '-nodes', '-days', '2', '-subj', '/CN=hdct', '-keyout', `${root}/client.key`, '-out', `${root}/client.crt`]);
  await lxcA(['config', 'trust', 'add', `${root}/client.crt`, '--restricted', '--projects', CLUSTER_PROJECT, '--name', 'hdct']);
  const lxd = createLxdClient({
    url: `https://${SUBNET}.11:8443`,
    project: CLUSTER_PROJECT,
    cert: readFileSync(`${root}/client.crt`),
    key: readFileSync(`${root}/client.key`),
    serverCert: readFileSync(path.join(dirs[0]!, 'cluster.crt')),
  });
  const instances = async () => JSON.parse(await lxcA(['query', `/1.0/instances?recursion=1&project=${CLUSTER_PROJECT}`])) as { name: string; location: string }[];
  return {
    members: NS,
    lxd,
    lxc: lxcA,
    async locationOf(instance) {
      return (await instances()).find((i) => i.name === instance)?.location ?? '';
    },
    async killMember(name) {
      const i = NS.indexOf(name as (typeof NS)[number]);
      const mine = (await instances()).filter((x) => x.location === name).map((x) => x.name);
      record(root, (await instances()).map((x) => x.name));
      killAll([...pidsIn(NS[i]!), ...containerPids(mine)]);
      killAll(containerPids(mine));
    },
    async reviveMember(name) {
      const i = NS.indexOf(name as (typeof NS)[number]);
      startDaemon(NS[i]!, dirs[i]!);
      await run('lxd', ['waitready', '--timeout=120'], { env: { ...process.env, LXD_DIR: dirs[i] } });
    },
    async close() {
      lxd.close();
      try {
        record(root, (await instances()).map((x) => x.name));
      } catch {
        /* a daemon is already gone: the cgroup scan finds the rest */
      }
      tearDown();
    },
  };
}
