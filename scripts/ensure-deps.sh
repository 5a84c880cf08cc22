#!/bin/sh
# Installs what the product needs and is missing: npm packages, and (as root on Debian/Ubuntu) the system
# packages the host itself runs: util-linux's setpriv (scripts/run-server.sh drops to the unprivileged user with
# it), iproute2 and passwd (scripts/lxd/host-setup.sh) and for browser tests chromium. The desktops' programs
# (Xvnc, the window manager, GStreamer and the streaming agent) are in the desktop image, not on the host;
# scripts/lxd/host-setup.sh installs LXD and what building that image takes. Safe to run repeatedly.
set -e
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages..."
  npm ci --no-audit --no-fund --loglevel=error
fi
need=""
command -v setpriv >/dev/null 2>&1 || need="$need util-linux"
command -v useradd >/dev/null 2>&1 || need="$need passwd"
command -v ip >/dev/null 2>&1 || need="$need iproute2"
command -v ps >/dev/null 2>&1 || need="$need procps"
[ -n "${HYPERDESK_NEED_BROWSER:-}" ] && { command -v chromium >/dev/null 2>&1 || need="$need chromium"; }
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need="$need fonts-dejavu-core"
if [ -n "$need" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing system packages:$need"
    . scripts/apt.sh
    apt_get update -qq
    apt_get install -y -qq --no-install-recommends $need
  else
    echo "Missing system packages:$need (install them with: sudo apt-get install$need)" >&2
  fi
fi
