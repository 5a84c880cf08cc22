import { accessSync, chmodSync, chownSync, constants, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The desktop session of one local machine, run by bash as the leader of a new process group: Xvfb on its own
 * display, openbox, an xterm titled with the machine's name, and x11vnc on loopback. When the X server or the VNC
 * server ends, the script ends the whole group, so a desktop is either complete or gone.
 * Exit 3: the X server did not come up (display taken by another server, or it failed); 4: it took too long.
 */
export const DESKTOP_SCRIPT = String.raw`
set -u
D="$1"; P="$2"; NAME="$3"
Xvfb ":$D" -screen 0 1280x800x24 -nolisten tcp -noreset &
xpid=$!
n=0
until [ -S "/tmp/.X11-unix/X$D" ] && [ "$(tr -dc 0-9 < "/tmp/.X$D-lock" 2>/dev/null)" = "$xpid" ]; do
  kill -0 "$xpid" 2>/dev/null || exit 3
  n=$((n+1)); [ "$n" -gt 300 ] && { kill "$xpid"; exit 4; }
  sleep 0.05
done
export DISPLAY=":$D"
command -v xsetroot >/dev/null && xsetroot -solid '#1e293b' -name "$NAME"
openbox >/dev/null 2>&1 &
xterm -title "$NAME" -fa 'DejaVu Sans Mono' -fs 11 -geometry 100x30+48+64 -e bash -c 'printf "\033[1m%s\033[0m\nThis is your Hyperdesk machine. Files in your home folder (~) are kept when it stops.\n\n" "$0"; cd; exec bash -l' "$NAME" &
x11vnc -display ":$D" -localhost -noipv6 -rfbport "$P" -forever -shared -nopw -quiet -desktop "$NAME" &
vpid=$!
wait -n "$xpid" "$vpid"
kill 0
`;

export const DESKTOP_PROGRAMS = ['Xvfb', 'openbox', 'xterm', 'x11vnc', 'bash'];

/** A fixed PATH for desktops: they never inherit the server's environment (it holds secrets). */
export const DESKTOP_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function missingPrograms(): string[] {
  const dirs = DESKTOP_PATH.split(':');
  return DESKTOP_PROGRAMS.filter(
    (p) =>
      !dirs.some((d) => {
        try {
          accessSync(path.join(d, p), constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }),
  );
}

export interface DesktopUser {
  uid: number;
  gid: number;
  name: string;
}

/**
 * Who the desktops run as. A server running as root never hands its users a root shell: desktops then run as
 * the unprivileged `nobody` user. Otherwise they run as the server's own user.
 */
export function desktopUser(): DesktopUser | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , uid, gid] = line.split(':');
      if (name === 'nobody') return { name, uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    /* fall through to the conventional ids */
  }
  return { name: 'nobody', uid: 65534, gid: 65534 };
}

/**
 * Makes `dir` reachable for the desktop user: the data dir gets the search (x) bit for others, which lets a
 * process open a known path below it without listing anything; every ancestor must already allow that.
 */
export function ensureReachable(dataDir: string, user: DesktopUser): void {
  const mode = statSync(dataDir).mode;
  if ((mode & 0o001) === 0) chmodSync(dataDir, (mode & 0o7777) | 0o001);
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(`desktops run as ${user.name}, who cannot reach ${dataDir}: allow it with "chmod o+x ${dir}"`);
    }
    if (dir === path.dirname(dir)) break;
  }
}

/** /tmp/.X11-unix must be root's sticky directory when the X servers run unprivileged. */
export function ensureX11SocketDir(): void {
  mkdirSync('/tmp/.X11-unix', { recursive: true, mode: 0o1777 });
  chownSync('/tmp/.X11-unix', 0, 0);
  chmodSync('/tmp/.X11-unix', 0o1777);
}
