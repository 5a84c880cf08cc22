#!/bin/sh
# Installs what the product needs and is missing: npm packages, and (as root on Debian/Ubuntu) the system
# packages for real sandboxed desktops (bubblewrap, slirp4netns, Xvfb, openbox, tint2, xterm, x11vnc, …) and
# browser tests (chromium). Safe to run repeatedly.
set -e
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages..."
  npm ci --no-audit --no-fund --loglevel=error
fi
need=""
command -v Xvfb >/dev/null 2>&1 || need="$need xvfb xauth"
command -v openbox >/dev/null 2>&1 || need="$need openbox"
command -v xterm >/dev/null 2>&1 || need="$need xterm"
command -v x11vnc >/dev/null 2>&1 || need="$need x11vnc"
# The desktop sandbox (bubblewrap, per-machine users, NAT without host loopback) and what a desktop shows.
command -v bwrap >/dev/null 2>&1 || need="$need bubblewrap"
command -v slirp4netns >/dev/null 2>&1 || need="$need slirp4netns"
command -v setpriv >/dev/null 2>&1 || need="$need util-linux"
command -v nsenter >/dev/null 2>&1 || need="$need util-linux"
command -v useradd >/dev/null 2>&1 || need="$need passwd"
command -v ip >/dev/null 2>&1 || need="$need iproute2"
command -v xauth >/dev/null 2>&1 || need="$need xauth"
command -v xsetroot >/dev/null 2>&1 || need="$need x11-xserver-utils"
command -v tint2 >/dev/null 2>&1 || need="$need tint2"
command -v pcmanfm >/dev/null 2>&1 || need="$need pcmanfm"
command -v glxgears >/dev/null 2>&1 || need="$need mesa-utils"
command -v ps >/dev/null 2>&1 || need="$need procps"
command -v xwininfo >/dev/null 2>&1 || need="$need x11-utils"
[ -n "${HYPERDESK_NEED_BROWSER:-}" ] && { command -v chromium >/dev/null 2>&1 || need="$need chromium"; }
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need="$need fonts-dejavu-core"
# WebRTC streaming agent (server/agent, Debian's python3 with GStreamer; XTest for input and RandR for the desktop
# size through ctypes); desktops fall back to VNC without it.
for p in gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad \
  gstreamer1.0-plugins-ugly gstreamer1.0-x gstreamer1.0-nice gstreamer1.0-pulseaudio gir1.2-gst-plugins-bad-1.0 \
  python3-gi xdotool xclip x11-xserver-utils pulseaudio pulseaudio-utils libxtst6 libxrandr2; do
  command -v dpkg-query >/dev/null 2>&1 && ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && need="$need $p"
done
if [ -n "$need" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing system packages:$need"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
  else
    echo "Missing system packages:$need (install them with: sudo apt-get install$need)" >&2
  fi
fi
