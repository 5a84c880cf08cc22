#!/bin/sh
# Installs what the product needs and is missing: npm packages, and (as root on Debian/Ubuntu) the system
# packages for real desktops (Xvfb, openbox, xterm, x11vnc) and browser tests (chromium). Safe to run repeatedly.
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
command -v xwininfo >/dev/null 2>&1 || need="$need x11-utils"
[ -n "${HYPERDESK_NEED_BROWSER:-}" ] && { command -v chromium >/dev/null 2>&1 || need="$need chromium"; }
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need="$need fonts-dejavu-core"
if [ -n "$need" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing system packages:$need"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
  else
    echo "Missing system packages:$need (install them with: sudo apt-get install$need)" >&2
  fi
fi
