import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { DESKTOP_PATH } from './sandbox';

/** Programs a sandboxed desktop needs on this host (the session's and the sandbox's own). */
export const DESKTOP_PROGRAMS = ['bwrap', 'setpriv', 'useradd', 'userdel', 'Xvfb', 'openbox', 'tint2', 'pcmanfm', 'xterm', 'glxgears', 'x11vnc', 'bash'];
/** Needed only with MACHINE_EGRESS=internet. */
export const EGRESS_PROGRAMS = ['slirp4netns'];

export function missingPrograms(programs: string[]): string[] {
  const dirs = DESKTOP_PATH.split(':');
  return programs.filter(
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

export const NOT_ROOT =
  'Machines need the server to run as root to sandbox desktops (bubblewrap + per-machine users); start the server as root, or use another machine provider.';

/** Why no sandboxed desktop can start here, or null. */
export function desktopPreflight(egress: 'none' | 'internet'): string | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return NOT_ROOT;
  const missing = missingPrograms([...DESKTOP_PROGRAMS, ...(egress === 'internet' ? EGRESS_PROGRAMS : [])]);
  return missing.length
    ? `Machines cannot start on this server: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed.`
    : null;
}
