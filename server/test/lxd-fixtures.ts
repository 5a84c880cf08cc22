import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { lxdProjectFor } from '../src/config';
import { connectionFromDir, createLxdClient, type LxdClient } from '../src/modules/machines/providers/lxd/client';
import { createLxdProvider, instanceOf, type LxdProviderOptions } from '../src/modules/machines/providers/lxd/provider';
import type { MachineProvider } from '../src/modules/machines/providers/types';

const SETUP = path.join(import.meta.dirname, '../../scripts/lxd/host-setup.sh');

/** The container engine a deployment runs on: its CLI, host-setup's settings for it, the desktops' bridge. */
export interface Engine {
  cli: 'lxc' | 'incus';
  /** The daemon's directory (its instances' monitors name it). */
  dir: string;
  setupEnv: Record<string, string>;
  network: string;
}
/** Debian's LXD 5.0, what npm start prepares by default. */
export const LXD: Engine = { cli: 'lxc', dir: '/var/lib/lxd', setupEnv: {}, network: 'hdbr0' };
/**
 * Incus 6 (bookworm-backports), beside this host's LXD: a bridge, subnet and API port of its own. (One engine per
 * host in production: both allocate their containers' ids from root's one subordinate range.)
 */
export const INCUS: Engine = {
  cli: 'incus',
  dir: '/var/lib/incus',
  setupEnv: { LXD_ENGINE: 'incus', LXD_NETWORK: 'hdinc0', LXD_SUBNET: '10.252.0.1/24', LXD_ADDRESS: '127.0.0.1:8444' },
  network: 'hdinc0',
};

export interface LxdDeployment {
  dataDir: string;
  project: string;
  /** The desktop image host-setup built for this checkout (hyperdesk-desktop-<recipe>). */
  image: string;
  lxd: LxdClient;
  provider: MachineProvider;
  /** Another provider on the same deployment, as a restarted server makes one (nothing in memory), logging to `log`. */
  restarted(log?: LxdProviderOptions['log']): MachineProvider;
  /** Runs a shell script inside a machine's instance as the desktop's user (a tenant's shell). */
  shell(machineId: string, script: string, timeoutMs?: number): Promise<{ code: number; out: string }>;
  /**
   * The same for a script that always prints and may run again: run again (at most twice more) while it printed
   * nothing, as LXD on a fully loaded CPU answers an exec's exit without its output (canonical/lxd#11422).
   */
  said(machineId: string, script: string, timeoutMs?: number): Promise<{ code: number; out: string }>;
  /** Runs a shell script inside a machine's instance as its root (not the tenant's: for test set-up only). */
  rootShell(machineId: string, script: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A deployment of its own on this host's LXD, prepared exactly as `npm start` prepares one (scripts/lxd/host-setup.sh
 * as root: daemon, pool, network, image, a restricted project and its certificate), then driven through the API
 * with that certificate alone.
 */
export async function lxdDeployment(
  limits: Partial<LxdProviderOptions['limits']> = {},
  dataDir = mkdtempSync(path.join(tmpdir(), 'hd-lxd-')),
  engine: Engine = LXD,
): Promise<LxdDeployment> {
  const project = lxdProjectFor(dataDir);
  const env = await prepareLxd(dataDir, engine);
  const lxd = createLxdClient(connectionFromDir(env.LXD_URL!, project, path.join(dataDir, 'lxd')));
  const options: LxdProviderOptions = {
    lxd,
    pool: 'hyperdesk',
    network: engine.network,
    image: env.LXD_IMAGE!,
    usrVolume: env.LXD_USR_VOLUME,
    limits: { cpus: 1, memoryMb: 1024, pids: 400, diskMb: 200, rootMb: 4096, ...limits },
  };
  const provider = createLxdProvider(options);
  const run = (args: string[], timeoutMs = 60_000) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      execFile(engine.cli, args, { timeout: timeoutMs, maxBuffer: 1 << 22 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
      });
    });
  const shell = (id: string, script: string, timeoutMs?: number) =>
    run(['exec', instanceOf(id), '--project', project, '--user', '1000', '--group', '1000', '--env', 'HOME=/home/user', '--cwd', '/home/user', '--', 'bash', '-c', script], timeoutMs);
  return {
    dataDir,
    project,
    image: env.LXD_IMAGE!,
    lxd,
    provider,
    restarted: (log) => createLxdProvider({ ...options, log }),
    shell,
    async said(id, script, timeoutMs) {
      let r = await shell(id, script, timeoutMs);
      for (let i = 0; i < 2 && !r.out.trim(); i++) r = await shell(id, script, timeoutMs);
      return r;
    },
    rootShell: async (id, script) => (await run(['exec', instanceOf(id), '--project', project, '--', 'bash', '-c', script])).out,
    async close() {
      lxd.close();
      removeProject(project, engine.cli);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Prepares this host's LXD for the deployment of `dataDir` as `npm start` does (scripts/lxd/host-setup.sh, as root)
 * and answers the settings it left in DATA_DIR/lxd/env (LXD_URL). removeProject(lxdProjectFor(dataDir)) undoes it.
 */
export async function prepareLxd(dataDir: string, engine: Engine = LXD): Promise<Record<string, string>> {
  await promisify(execFile)('sh', [SETUP], { env: { ...process.env, ...engine.setupEnv, DATA_DIR: dataDir }, timeout: 3_600_000, maxBuffer: 1 << 24 }).catch((err: Error & { stdout?: string }) => {
    // Its progress says which step failed (a command that fails silently leaves only that).
    err.message += `\nhost-setup.sh printed, last:\n${(err.stdout ?? '').trim().split('\n').slice(-15).join('\n')}`;
    throw err;
  });
  const env = Object.fromEntries(readFileSync(path.join(dataDir, 'lxd', 'env'), 'utf8').trim().split('\n').map((l) => l.split('=') as [string, string]));
  const usr = path.join(dataDir, 'lxd', 'usr-volume');
  return existsSync(usr) ? { ...env, LXD_USR_VOLUME: readFileSync(usr, 'utf8').trim() } : env;
}

/**
 * Deletes a test project with everything in it (instances, volumes, profiles) and its certificate. A delete LXD
 * refuses is tried twice more (a host busy deleting 40 instances on btrfs once left 9 of a bench's behind, unsaid),
 * then named on stderr.
 */
export function removeProject(project: string, cli: Engine['cli'] = 'lxc'): void {
  const q = (args: string[], tries = 1) => {
    for (let i = 1; ; i++) {
      try {
        return execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        if (i >= tries) {
          if (tries > 1) process.stderr.write(`could not remove (${cli} ${args.join(' ')}): ${String((err as { stderr?: string }).stderr ?? err).trim()}\n`);
          return '';
        }
      }
    }
  };
  const gone = (args: string[]) => q(args, 3);
  for (const name of q(['list', '--project', project, '--format', 'csv', '-c', 'n']).split('\n').filter(Boolean)) gone(['delete', '--force', '--project', project, name]);
  for (const line of q(['storage', 'volume', 'list', 'hyperdesk', '--project', project, '--format', 'csv']).split('\n')) {
    const [type, name] = line.split(',');
    if (type === 'custom' && name) gone(['storage', 'volume', 'delete', 'hyperdesk', name, '--project', project]);
  }
  for (const p of q(['profile', 'list', '--project', project, '--format', 'csv']).split('\n')) {
    const name = p.split(',')[0];
    if (name && name !== 'default') gone(['profile', 'delete', name, '--project', project]);
  }
  // JSON: the two engines' CSV columns differ (Incus puts the name first), and a test on Incus left its certificate.
  const certs = JSON.parse(q(['config', 'trust', 'list', '--format', 'json']) || '[]') as { name: string; fingerprint: string }[];
  for (const c of certs) if (c.name === `hyperdesk-${project}`) q(['config', 'trust', 'remove', c.fingerprint]);
  const exists = q(['project', 'list', '--format', 'csv']).split('\n').some((l) => l.split(',')[0]!.replace(' (current)', '') === project);
  if (exists) gone(['project', 'delete', project]);
}
