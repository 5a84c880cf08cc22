import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

/** Where the machine's run dir (sockets, X cookie) appears inside both sandboxes. */
export const RUN_INSIDE = '/run/hyperdesk';
export const HOME_INSIDE = '/home/user';
export const AGENT_INSIDE = '/opt/hyperdesk-agent';
const GST_REGISTRY_INSIDE = '/opt/gstreamer-registry.bin';

/** A fixed PATH for desktops: they never inherit the server's environment (it holds secrets). */
export const DESKTOP_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The desktop's sound server (optional: desktops start without it where PulseAudio is not installed). */
export const PULSE_SOCKET = `${RUN_INSIDE}/pulse/native`;
export const hasPulse = () => existsSync('/usr/bin/pulseaudio');

/** Exit codes of the session script, turned into stop reasons. */
export const EXIT_X_FAILED = 3;
export const EXIT_X_SLOW = 4;
export const EXIT_X_DIED = 10;
export const EXIT_VNC_DIED = 11;

/**
 * The desktop session, run by bash inside the sandbox as the machine's user: Xvfb on :0 (the sandbox has its own
 * /tmp, so display 0 is always free), openbox, a tint2 panel, an xterm titled with the machine's name, pcmanfm,
 * a continuously rendering glxgears (Mesa software GL), PulseAudio (a null sink, socket in the run dir) and x11vnc
 * on a Unix socket in the run dir (no TCP port).
 * X listens on its socket file only (no abstract socket, no TCP), so the streaming agent outside reaches it
 * through the run dir. When X or VNC ends, the script ends, and with it the sandbox.
 */
export const SESSION_SCRIPT = String.raw`
set -u
# The inherited stdout/stderr is the server's log file of this machine: nothing the user runs may write there.
exec >/dev/null 2>&1
NAME="$1"; R=${RUN_INSIDE}
cd "$HOME"
Xvfb :0 -screen 0 1920x1080x24 +extension RANDR -auth "$R/xauth" -nolisten tcp -nolisten local -noreset >/dev/null 2>&1 &
xpid=$!
# fd 9: an idle pipe; read -t on it sleeps without forking a sleep process.
exec 9<> <(:)
n=0
until [ -S /tmp/.X11-unix/X0 ]; do
  kill -0 "$xpid" 2>/dev/null || exit ${EXIT_X_FAILED}
  n=$((n+1)); [ "$n" -gt 1100 ] && exit ${EXIT_X_SLOW}
  read -t 0.05 -u 9
done
export DISPLAY=:0 XAUTHORITY="$R/xauth"
# VNC first: the desktop is usable (and reported running) while the programs below are still starting.
# x11vnc cannot follow a change of the screen size (the streaming agent fits the desktop to the viewer's tab): it
# crashes in its new-framebuffer code more often than not. With "-xrandr exit" it ends cleanly instead, removing its
# socket, and the loop at the end starts it again at the new size (a VNC viewer reconnects, as after any hiccup).
start_vnc() {
  x11vnc -display :0 -auth "$R/xauth" -unixsock "$R/vnc.sock" -rfbport 0 -forever -shared -nopw -quiet -xrandr exit \
    -desktop "$NAME" >/dev/null 2>&1 &
  vpid=$!
}
start_vnc
# The desktop's programs start once VNC listens, so they do not compete with it for the CPU.
n=0
until [ -S "$R/vnc.sock" ] || [ "$n" -gt 200 ]; do kill -0 "$vpid" 2>/dev/null || break; n=$((n+1)); read -t 0.05 -u 9; done
# Sound: a null sink the streaming agent records from, on a socket in the run dir (no D-Bus, no autospawn).
if command -v pulseaudio >/dev/null; then
  mkdir -p -m 700 "$R/pulse" /tmp/xdg && chmod 700 /tmp/xdg
  XDG_RUNTIME_DIR=/tmp/xdg pulseaudio --daemonize=no --exit-idle-time=-1 -n --use-pid-file=no \
    --load="module-native-protocol-unix socket=$R/pulse/native auth-anonymous=1" \
    --load="module-null-sink sink_name=desktop" --load=module-always-sink >/dev/null 2>&1 &
  export PULSE_SERVER="unix:$R/pulse/native"
fi
command -v xsetroot >/dev/null && xsetroot -solid '#1e293b' -name "$NAME"
# The 3D demo and the file manager map their windows a moment after the terminal (which has the focus when the
# desktop appears): they must not take the keyboard from what the user clicked meanwhile.
sed 's#</applications>#<application title="glxgears"><focus>no</focus></application><application name="pcmanfm"><focus>no</focus></application></applications>#' \
  /etc/xdg/openbox/rc.xml > "$R/openbox.xml" 2>/dev/null && obcfg=(--config-file "$R/openbox.xml") || obcfg=()
openbox "${'$'}{obcfg[@]}" >/dev/null 2>&1 &
tint2 >/dev/null 2>&1 &
pcmanfm "$HOME" >/dev/null 2>&1 &
xterm -title "$NAME" -fa 'DejaVu Sans Mono' -fs 11 -geometry 100x30+48+64 -e bash -c 'printf "\033[1m%s\033[0m\nThis is your Hyperdesk machine. Files in your home folder (~) are kept when it stops.\n\n" "$0"; cd; exec bash -l' "$NAME" >/dev/null 2>&1 &
# The 3D demo starts last and a second late: compiling its software renderer is the costliest part of a start.
( read -t 1 -u 9; LIBGL_ALWAYS_SOFTWARE=1 exec nice -n 19 glxgears -geometry 320x320+1360+64 ) >/dev/null 2>&1 &
gpid=$!
# glxgears draws as fast as the CPU allows: let it run 10 ms in every 200 (still an animation, at a twentieth of
# the CPU, niced on top), so a classroom of desktops on one host leaves the CPU to what users do.
# read -t on an idle pipe (fd 9) sleeps without forking. It runs unthrottled until it has used 0.3 s of CPU (its
# software renderer compiled and the first frames drawn take about 0.2 s), at most 5 s: a time-based warm-up
# burnt a core for 5 s per desktop, which a classroom's 40 starts paid 40 times over.
gcpu=0
cpu_of() { local s; read -r s < "/proc/$1/stat" 2>/dev/null || return 1; s=${'$'}{s##*) }; set -- $s; gcpu=$(( ${'$'}{12} + ${'$'}{13} )); }
n=0
while [ "$n" -lt 50 ] && { ! cpu_of "$gpid" || [ "$gcpu" -lt 30 ]; }; do n=$((n+1)); read -t 0.1 -u 9; done
# VNC that ended is started again (a resize ends it, see start_vnc), unless it ends 10 times within a minute.
vwindow=$SECONDS; vends=0
while kill -0 "$xpid" 2>/dev/null; do
  if ! kill -0 "$vpid" 2>/dev/null; then
    [ $((SECONDS - vwindow)) -gt 60 ] && { vwindow=$SECONDS; vends=0; }
    vends=$((vends+1)); [ "$vends" -gt 10 ] && exit ${EXIT_VNC_DIED}
    start_vnc
  fi
  kill -CONT "$gpid" 2>/dev/null; read -t 0.01 -u 9; kill -STOP "$gpid" 2>/dev/null; read -t 0.19 -u 9
done
exit ${EXIT_X_DIED}
`;

/**
 * The supervisor, run by bash as root in its own session (detached from the server, so a restarted server adopts
 * the desktop). It joins the machine's cgroups first (everything it starts inherits them), runs the desktop
 * sandbox, gives it outbound network (slirp4netns) when allowed, ends the start's CPU boost and starts the streaming
 * agent once VNC listens, and records the sandbox's exit code.
 * Arguments: machine dir, egress, run dir, desktop argv, "@@agent@@", agent argv.
 */
export const SUPERVISOR_SCRIPT = String.raw`
set -u
M="$1"; EGRESS="$2"; RUN="$3"; shift 3
for f in $CGROUP_PROCS; do echo $$ > "$f" || exit 20; done
ulimit -c 0 $ULIMITS || exit 21
desk=(); while [ "$1" != @@agent@@ ]; do desk+=("$1"); shift; done; shift
"${'$'}{desk[@]}" 3>"$M/info.json" &
bpid=$!
# Waits below poll without forking (read -t on an idle pipe, no sleep process): 40 desktops starting at once would
# otherwise fork hundreds of processes a second just to wait.
exec 8<> <(:)
child=""
for ((i = 0; i < 400; i++)); do
  info=""; read -r -d '' info < "$M/info.json" 2>/dev/null
  [[ $info =~ \"child-pid\":\ *([0-9]+) ]] && child=${'$'}{BASH_REMATCH[1]} && break
  kill -0 "$bpid" 2>/dev/null || break
  read -t 0.05 -u 8
done
if [ -n "$child" ] && [ "$EGRESS" = internet ]; then
  slirp4netns --configure --disable-host-loopback "$child" tap0 >/dev/null 2>&1 &
fi
# Once VNC listens: the CPU share goes back from the start boost to the usual one (CPU_SETTLE: "file value"), and
# the streaming agent starts (loading GStreamer must not slow the desktop's own start: they share the CPU). The
# agent joins the desktop's IPC namespace (and no other): X's MIT-SHM capture needs the segments it shares.
( until [ -S "$RUN/vnc.sock" ]; do kill -0 "$bpid" 2>/dev/null || exit 0; read -t 0.05 -u 8; done
  [ -n "${'$'}{CPU_SETTLE:-}" ] && echo "${'$'}{CPU_SETTLE#* }" > "${'$'}{CPU_SETTLE%% *}"
  [ "$#" -gt 0 ] || exit 0
  [ -n "$child" ] && exec nsenter --ipc="/proc/$child/ns/ipc" -- "$@"; exec "$@" ) &
wait "$bpid"
echo "$?" > "$M/exit.tmp" && mv -f "$M/exit.tmp" "$M/exit"
kill -KILL 0
`;

/** bwrap arguments shared by both sandboxes: the system read-only, own /proc, /dev and /tmp, nothing else. */
function baseArgs(): string[] {
  return [
    '--unshare-pid', '--unshare-uts', '--die-with-parent', '--new-session',
    '--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc',
    '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin', '--symlink', 'usr/lib', '/lib',
    ...['lib32', 'lib64', 'libx32'].flatMap((l) => ['--symlink', `usr/${l}`, `/${l}`]),
    '--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp',
    '--perms', '0755', '--dir', '/run', '--perms', '0755', '--dir', '/home', '--perms', '0755', '--dir', '/opt',
    '--hostname', 'hyperdesk', '--clearenv',
  ];
}

/** Drops to the machine's user, with no capabilities and no way to regain any (setuid binaries do nothing). */
function asUser(uid: number, gid: number): string[] {
  return ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all', '--'];
}

const env = (vars: Record<string, string>) => Object.entries(vars).flatMap(([k, v]) => ['--setenv', k, v]);

export function desktopArgs(o: { home: string; run: string; uid: number; gid: number; user: string; name: string }): string[] {
  return [
    'bwrap', '--info-fd', '3', ...baseArgs(), '--unshare-net', '--unshare-ipc',
    '--bind', o.home, HOME_INSIDE, '--bind', o.run, RUN_INSIDE, '--bind', `${o.run}/x11`, '/tmp/.X11-unix',
    ...env({ HOME: HOME_INSIDE, USER: o.user, LOGNAME: o.user, SHELL: '/bin/bash', PATH: DESKTOP_PATH, LANG: 'C.UTF-8', TERM: 'xterm' }),
    ...asUser(o.uid, o.gid), '/bin/bash', '-c', SESSION_SCRIPT, 'hyperdesk-desktop', o.name,
  ];
}

/**
 * The streaming agent's sandbox: the host network (WebRTC needs UDP), but its own PID namespace and /tmp, and of
 * the data dir only the machine's run dir, where the X socket and cookie are. Its IPC namespace is the desktop's
 * (the supervisor enters it), so X can fill the agent's MIT-SHM capture buffers.
 */
export function agentArgs(o: { run: string; uid: number; gid: number; agentDir: string; agentFile: string; gstRegistry?: string }): string[] {
  // A GStreamer plugin registry the server built once (read-only here): without it every agent start scans every
  // plugin into its empty /tmp first.
  const registry = o.gstRegistry
    ? ['--ro-bind', o.gstRegistry, GST_REGISTRY_INSIDE, ...env({ GST_REGISTRY: GST_REGISTRY_INSIDE, GST_REGISTRY_UPDATE: 'no' })]
    : [];
  return [
    'bwrap', ...baseArgs(),
    '--bind', o.run, RUN_INSIDE, '--bind', `${o.run}/x11`, '/tmp/.X11-unix', '--ro-bind', o.agentDir, AGENT_INSIDE,
    ...registry,
    ...env({ HOME: '/tmp', PATH: DESKTOP_PATH, LANG: 'C.UTF-8', DISPLAY: ':0', XAUTHORITY: `${RUN_INSIDE}/xauth` }),
    ...asUser(o.uid, o.gid),
    '/usr/bin/python3', `${AGENT_INSIDE}/${o.agentFile}`,
    '--display', ':0', '--xauthority', `${RUN_INSIDE}/xauth`, '--socket', `${RUN_INSIDE}/agent.sock`,
    ...(hasPulse() ? ['--pulse-server', `unix:${PULSE_SOCKET}`] : []),
  ];
}

/** An Xauthority file with one MIT-MAGIC-COOKIE-1 for display 0 on any host (FamilyWild), fresh per start. */
export function xauthFile(): Buffer {
  const field = (b: Buffer) => Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]);
  return Buffer.concat([
    Buffer.from([0xff, 0xff]),
    field(Buffer.alloc(0)),
    field(Buffer.from('0')),
    field(Buffer.from('MIT-MAGIC-COOKIE-1')),
    field(randomBytes(16)),
  ]);
}
