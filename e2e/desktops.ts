import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { lxdProjectFor } from '../server/src/config';
import { volumeOf } from '../server/src/modules/machines/providers/lxd/provider';
import type { RunningServer } from './harness';

/**
 * What a test looks at inside a server's desktops, as root on this host (the test's side, not the server's, which
 * has no such access): an LXD instance through `lxc exec` and its home volume's directory in the pool.
 */
const POOL_DIR = '/var/lib/lxd/storage-pools/hyperdesk/custom';

const projectOf = (server: RunningServer) => lxdProjectFor(path.resolve(server.dataDir));

/** Runs a command inside the machine's instance as the desktop's user, on its display. */
function inInstance(server: RunningServer, machineId: string, argv: string[]): string {
  return execFileSync('lxc', ['exec', `hd-${machineId}`, '--project', projectOf(server), '--user', '1000', '--group', '1000',
    '--env', 'HOME=/home/user', '--env', 'DISPLAY=:0', '--env', 'XAUTHORITY=/run/hyperdesk/xauth', '--', ...argv], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The titles of the desktop's windows. */
export function windowTitles(server: RunningServer, machineId: string): string[] {
  return [...inInstance(server, machineId, ['xwininfo', '-root', '-tree']).matchAll(/0x[0-9a-f]+ "([^"]*)"/g)].map((m) => m[1]!);
}

/** The folder that holds the home of `homeKey` (a machine id, or a course seat's key). */
export function homeDir(server: RunningServer, homeKey: string): string {
  return path.join(POOL_DIR, `${projectOf(server)}_${volumeOf(homeKey)}`);
}

/** A file in a home folder ('' until it exists). */
export function readHome(server: RunningServer, homeKey: string, name: string): string {
  try {
    return readFileSync(path.join(homeDir(server, homeKey), name), 'utf8');
  } catch {
    return '';
  }
}

/** Every home folder of the server's machines that holds `name`: folder → content. */
export function homesWith(server: RunningServer, name: string): Map<string, string> {
  const found = new Map<string, string>();
  const dir = POOL_DIR;
  const prefix = `${projectOf(server)}_home-`;
  let entries: string[];
  try {
    entries = readdirSync(dir).filter((e) => e.startsWith(prefix));
  } catch {
    return found;
  }
  for (const e of entries) {
    try {
      found.set(e, readFileSync(path.join(dir, e, name), 'utf8'));
    } catch {
      /* not this home */
    }
  }
  return found;
}

/** The machine's log (its desktop and streaming agent), for failure messages. */
export function machineLog(server: RunningServer, machineId: string): string {
  try {
    return inInstance(server, machineId, ['cat', '/tmp/agent.log']);
  } catch {
    return '';
  }
}
