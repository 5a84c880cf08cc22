#!/bin/bash
# The desktop session inside a machine's LXD instance, run by its init (init.sh) as `user`:
# Xvnc (TigerVNC: the X server and its VNC server in one) on :0 and /run/hyperdesk/vnc.sock, PulseAudio (a null sink) on /run/hyperdesk/pulse/native, the
# streaming agent on /run/hyperdesk/agent.sock, openbox, a tint2 panel, an xterm titled with the machine's name,
# pcmanfm and a throttled glxgears. The server reaches the two sockets only through LXD's exec API (authenticated,
# as this instance's own user), never through a host path. When X ends the script ends and init starts it again.
set -u
exec >/dev/null 2>&1
# The init starts this with an empty environment and the clock's zone ($1: an IANA name such as Europe/Berlin) as its
# argument: the desktop's clock, its shell's `date` and its programs show that zone's time (UTC for a name that is
# not a zone here).
TZ=${1:-UTC}
case $TZ in *[!A-Za-z0-9_/+-]* | *..* | /*) TZ=UTC ;; esac
[ -f "/usr/share/zoneinfo/$TZ" ] || TZ=UTC
export TZ HOME=/home/user USER=user LOGNAME=user SHELL=/bin/bash LANG=C.UTF-8 TERM=xterm \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GST_REGISTRY=/var/cache/gstreamer-1.0/registry.bin GST_REGISTRY_UPDATE=no
R=/run/hyperdesk
SCREEN=1920x1080
cd "$HOME"
NAME=
IFS= read -r NAME < "$R/name" 2>/dev/null
NAME=${NAME:-Hyperdesk}
# What a session before this one left (none at a machine's start: /run and /tmp are new).
left=()
for f in "$R/vnc.sock" "$R/agent.sock" "$R/xauth" "$R/wm-ready" /tmp/.X0-lock /tmp/.X11-unix/X0; do
  [ -e "$f" ] || [ -L "$f" ] && left+=("$f")
done
[ ${#left[@]} -eq 0 ] || rm -f "${left[@]}"
# X's cookie: 128 bits from the kernel's random source (bash's SRANDOM is getrandom(2)), as mcookie makes it.
printf -v cookie '%08x%08x%08x%08x' "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM"
xauth -q -f "$R/xauth" add :0 . "$cookie"
# VNC only on the Unix socket (-rfbport -1: no TCP port, not even inside the instance), without a password (the
# socket is this user's, reached only through LXD's exec API), every viewer shared (the wall's input connection beside
# the student's), the size set by the agent alone (a VNC viewer cannot resize the student's desktop). Xvnc follows a
# size change by itself: its viewers are told the new size on their connection. No blacklist: Xvnc otherwise counts
# each connection that ends before the handshake (every health look of the server, which reads only the greeting) as
# a failed log-in, and after 5 refuses every viewer for a while ("Too many security failures"); with no password
# there is nothing to guess, and only this user reaches the socket.
Xvnc :0 -geometry $SCREEN -depth 24 -auth "$R/xauth" -nolisten tcp -noreset -desktop "$NAME" \
  -rfbunixpath "$R/vnc.sock" -rfbunixmode 0600 -rfbport -1 -SecurityTypes None -AlwaysShared -AcceptSetDesktopSize=0 \
  -BlacklistThreshold=2147483647 &
xpid=$!
xstart=$SECONDS
exec 9<> <(:)
n=0
until [ -S /tmp/.X11-unix/X0 ]; do
  kill -0 "$xpid" 2>/dev/null || exit 3
  n=$((n+1)); [ "$n" -gt 1100 ] && exit 4
  read -t 0.05 -u 9
done
export DISPLAY=:0 XAUTHORITY="$R/xauth"
# The streaming agent, beside the desktop (same IPC namespace: X's MIT-SHM capture works), started as soon as X is
# up: its DTLS certificate and plugins are ready by the time a viewer comes (a viewer's offer waited for them when it
# started after VNC and the sound server). It looks for the sound server again for each viewer. Its DTLS key is kept in
# the home from one start to the next (server/agent/dtlskey.py): making it took a quarter of a desktop's start CPU.
python3 /opt/hyperdesk-agent/agent.py --display :0 --xauthority "$R/xauth" --socket "$R/agent.sock" --screen $SCREEN \
  --pulse-server "unix:$R/pulse/native" --dtls-key "$HOME/.local/state/hyperdesk/dtls-key.pem" 2>>/tmp/agent.log &
n=0
until [ -S "$R/vnc.sock" ] || [ "$n" -gt 200 ]; do kill -0 "$xpid" 2>/dev/null || exit 3; n=$((n+1)); read -t 0.05 -u 9; done
mkdir -p -m 700 "$R/pulse" /tmp/xdg
XDG_RUNTIME_DIR=/tmp/xdg pulseaudio --daemonize=no --exit-idle-time=-1 -n --use-pid-file=no \
  --load="module-native-protocol-unix socket=$R/pulse/native auth-anonymous=1" \
  --load="module-null-sink sink_name=desktop" --load=module-always-sink &
export PULSE_SERVER="unix:$R/pulse/native"
# The stream's path (Xvnc, the agent and its encoder, the sound server) runs at nice 0; everything from here on, the
# window manager and every program the user starts from the desktop, at nice 10: when the user's work takes every
# core (a shader compile, a build), the stream is not the one that waits, so the picture and the keys stay quick.
# Nice acts only inside the desktop's own cgroup (LXD's CPU limit shares the host between desktops), and nothing the
# user runs can take the priority back (an unprivileged process cannot lower its nice value).
renice -n 10 -p $$ >/dev/null
xsetroot -solid '#1e293b' -name "$NAME"
# No auto-repeat from X: the viewer's browser repeats a held key itself (keydown events with `repeat`), and a key-up
# late on a slow link or a busy host made X repeat the key on its own ('>' came as '>.': X repeats the bare key, without
# the Shift the agent taps around it). x11vnc turns it off while viewers are connected for the same reason.
xset r off
openbox --config-file /opt/hyperdesk/openbox.xml --startup "touch $R/wm-ready" &
tint2 -c /opt/hyperdesk/tint2rc &
# The file manager asks for no position: mapped before openbox manages the screen (a busy host can run it first) it
# stays where X put it, in the top-left corner over the terminal. It waits (at most 3 s) until openbox has started,
# which places it: openbox's startup command makes a file (it was an xprop and a grep every 50 ms, the more of them
# the busier the host; `xprop -spy` into a pipe holds its output until it exits).
n=0
until [ -e "$R/wm-ready" ] || [ "$n" -ge 150 ]; do n=$((n+1)); read -t 0.02 -u 9; done
pcmanfm "$HOME" &
# Ctrl+V and Ctrl+Shift+V paste the clipboard in the terminal as in the browser (the connect tab sends the local
# clipboard first, then the key); Shift+Insert pastes the primary selection, which the agent sets to the same text.
xterm -title "$NAME" -fa 'DejaVu Sans Mono' -fs 11 -geometry 100x30+48+64 \
  -xrm 'XTerm*VT100.translations: #override Ctrl <Key>v: insert-selection(CLIPBOARD)\n Ctrl Shift <Key>V: insert-selection(CLIPBOARD)' -e bash -c 'printf "\033[1m%s\033[0m\nThis is your Hyperdesk machine. Files in your home folder (~) are kept when it stops.\n\n" "$0"; cd; exec bash -l' "$NAME" &
( read -t 1 -u 9; LIBGL_ALWAYS_SOFTWARE=1 exec nice -n 19 glxgears -geometry 320x320+1360+64 ) &
gpid=$!
gcpu=0
# The demo pauses once its window is on the screen: it draws when someone watches (below), and until then its first
# frames cost a class of 40 a few CPU-seconds for nobody (the window's gears were drawn after 2 ticks on a 2-core
# Xeon, but the pause came at 25: a look every 0.1 s, and 5 ticks more after the window showed). A look (xwininfo,
# half of xdotool's CPU) each time its CPU doubles (1, 2, 4… ticks: on a 2-core EPYC VM llvmpipe had not mapped the
# window after 10), and at most 1 s of its CPU in all.
gnext=1
gmapped=0
cpu_of() { local s; read -r s < "/proc/$1/stat" 2>/dev/null || return 1; s=${s##*) }; set -- $s; gcpu=$(( ${12} + ${13} )); }
window_shown() {
  [ "$gmapped" = 1 ] && return 0
  cpu_of "$gpid" || return 0
  [ "$gcpu" -ge 100 ] && return 0
  [ "$gcpu" -ge "$gnext" ] || return 1
  gnext=$((gcpu * 2))
  local info
  info=$(xwininfo -name glxgears 2>/dev/null) && [[ $info == *'Map State: IsViewable'* ]] && gmapped=1
  [ "$gmapped" = 1 ]
}
n=0
while [ "$n" -lt 250 ] && ! window_shown; do n=$((n+1)); read -t 0.02 -u 9; done
# Whether a viewer is connected: an accepted connection (state 03) on the VNC or the agent socket. Nobody watching,
# the demo stays paused and the loop wakes once a second: 40 desktops of a class waiting for their students
# otherwise drew their demos all the time (half of a 2-core host) while the students connected.
watched() {
  local line
  while read -r line; do
    case $line in *" 03 "*" $R/vnc.sock" | *" 03 "*" $R/agent.sock") return 0 ;; esac
  done < /proc/net/unix
  return 1
}
# The demo runs, throttled, until its window is on the screen (or it has gone): on a busy host its first 5 s above
# may not have been enough to map it. The loop's first pass checks it.
tick=0; seen=0; warm=0
while kill -0 "$xpid" 2>/dev/null; do
  tick=$((tick+1))
  if [ $((tick % 5)) -eq 1 ]; then
    watched && seen=1 || seen=0
    [ "$warm" = 1 ] || { window_shown && warm=1; }
  fi
  run=$seen; [ "$warm" = 1 ] || run=1
  [ "$run" = 1 ] && { kill -CONT "$gpid" 2>/dev/null; read -t 0.01 -u 9; }
  kill -STOP "$gpid" 2>/dev/null
  if [ "$run" = 1 ] || [ $((SECONDS - xstart)) -le 3 ]; then read -t 0.19 -u 9; else tick=0; read -t 1 -u 9; fi
done
exit 10
