import { execFile, execFileSync } from 'node:child_process';
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

/** `lxc exec`'s arguments for a command inside the machine's instance as the desktop's user, on its display. */
function asDesktopUser(server: RunningServer, machineId: string, argv: string[]): string[] {
  return ['exec', `hd-${machineId}`, '--project', projectOf(server), '--user', '1000', '--group', '1000',
    '--env', 'HOME=/home/user', '--env', 'DISPLAY=:0', '--env', 'XAUTHORITY=/run/hyperdesk/xauth', '--', ...argv];
}

/** Runs a command inside the machine's instance as the desktop's user, on its display. */
function inInstance(server: RunningServer, machineId: string, argv: string[]): string {
  return execFileSync('lxc', asDesktopUser(server, machineId, argv), { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Moves the desktop's pointer back and forth for about `seconds` from inside the desktop (xdotool, as a program there
 * or an instructor's VNC take-over would: no input from the tab); resolves when it is done.
 */
export function movePointerInDesktop(server: RunningServer, machineId: string, seconds: number): Promise<void> {
  const script = `for i in $(seq 1 ${Math.round(seconds * 20)}); do xdotool mousemove $((600 + i % 2 * 40)) 400; sleep 0.05; done`;
  return new Promise((resolve, reject) => {
    execFile('lxc', asDesktopUser(server, machineId, ['bash', '-c', script]), { timeout: (seconds + 30) * 1000 }, (err) => (err ? reject(err) : resolve()));
  });
}

/** Raises and focuses the desktop's terminal (xdotool, as the desktop's user), as a click on its title bar would. */
export function raiseTerminal(server: RunningServer, machineId: string): void {
  inInstance(server, machineId, ['xdotool', 'search', '--sync', '--limit', '1', '--classname', 'xterm', 'windowactivate', '--sync']);
}

/** The ids of the server's running machines (its LXD project's running instances). */
export function runningMachines(server: RunningServer): string[] {
  const out = execFileSync('lxc', ['list', '--project', projectOf(server), '--format', 'csv', '--columns', 'n', 'status=running'], { encoding: 'utf8', timeout: 20_000 });
  return out.split('\n').filter((n) => n.startsWith('hd-')).map((n) => n.slice(3));
}

/** The titles of the desktop's windows. */
export function windowTitles(server: RunningServer, machineId: string): string[] {
  return [...inInstance(server, machineId, ['xwininfo', '-root', '-tree']).matchAll(/0x[0-9a-f]+ "([^"]*)"/g)].map((m) => m[1]!);
}

/** A top-level window of the desktop: its title, type and frame (decorations included) on the screen. */
export interface DesktopWindow {
  title: string;
  type: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * The screen size and the windows the window manager manages (its `_NET_CLIENT_LIST`), each with its frame: the
 * client's place and size from xwininfo plus openbox's `_NET_FRAME_EXTENTS`.
 */
export function desktopWindows(server: RunningServer, machineId: string): { screen: { w: number; h: number }; windows: DesktopWindow[] } {
  const script = `xwininfo -root | grep -E '^  (Width|Height):'
for id in $(xprop -root _NET_CLIENT_LIST | sed 's/.*# //; s/,//g'); do
  printf 'WINDOW %s | %s | %s\n' "$(xwininfo -id "$id" | tr '\n' ' ')" "$(xprop -id "$id" _NET_FRAME_EXTENTS)" "$(xprop -id "$id" _NET_WM_WINDOW_TYPE)"
done`;
  const out = inInstance(server, machineId, ['sh', '-c', script]);
  const num = (re: RegExp, text: string) => Number(re.exec(text)?.[1] ?? NaN);
  const screen = { w: num(/^ {2}Width: (\d+)/m, out), h: num(/^ {2}Height: (\d+)/m, out) };
  const windows = out.split('\n').filter((l) => l.startsWith('WINDOW ')).map((line) => {
    const [info = '', extents = '', type = ''] = line.slice(7).split(' | ');
    const [left = 0, right = 0, top = 0, bottom = 0] = /= ([\d, ]+)$/.exec(extents)?.[1]?.split(',').map(Number) ?? [];
    return {
      title: /Window id: 0x[0-9a-f]+ "(.*)" {2}/.exec(info)?.[1] ?? '',
      type: /_NET_WM_WINDOW_TYPE_(\w+)/.exec(type)?.[1] ?? 'NORMAL',
      x: num(/Absolute upper-left X: +(-?\d+)/, info) - left,
      y: num(/Absolute upper-left Y: +(-?\d+)/, info) - top,
      w: num(/Width: (\d+)/, info) + left + right,
      h: num(/Height: (\d+)/, info) + top + bottom,
    };
  });
  return { screen, windows };
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

/**
 * The streaming agent's log in the machine. Read up to three times (on a loaded host `lxc exec` can time out); a
 * read that still fails throws, so a test that counts lines in it never counts an empty string. `quiet`: for a
 * failure message, where no log is better than a second error ('' then).
 */
export function machineLog(server: RunningServer, machineId: string, opts: { quiet?: boolean } = {}): string {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return inInstance(server, machineId, ['cat', '/tmp/agent.log']);
    } catch (err) {
      last = err;
    }
  }
  if (opts.quiet) return '';
  throw new Error(`could not read the agent's log in ${machineId}: ${(last as Error).message}`);
}

/**
 * Ends the desktop's streaming agent and starts it again with the same command line, as the desktop's user (what a
 * crash and a restart look like to the gateway: its connection to the agent closes). Returns the new agent's pid
 * once it listens.
 */
export function restartAgent(server: RunningServer, machineId: string): string {
  const script = [
    "old=$(pgrep -f '^python3 /opt/hyperdesk-agent/agent.py' | head -1)",
    'cmd=$(tr "\\0" " " < /proc/$old/cmdline)',
    "before=$(grep -c 'listening on' /tmp/agent.log)",
    'kill $old; while kill -0 $old 2>/dev/null; do sleep 0.05; done',
    'setsid sh -c "exec $cmd 2>>/tmp/agent.log" </dev/null >/dev/null 2>&1 &',
    "until [ \"$(grep -c 'listening on' /tmp/agent.log)\" -gt \"$before\" ]; do sleep 0.05; done",
    "pgrep -f '^python3 /opt/hyperdesk-agent/agent.py' | head -1",
  ].join('\n');
  return inInstance(server, machineId, ['bash', '-c', script]).trim();
}
