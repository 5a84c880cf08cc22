#!/bin/sh
# Runs the compiled server (server/dist/main.js) the way production runs it. Started as root: prepares this host's
# LXD for the deployment (scripts/lxd/host-setup.sh: the daemon, pool, network, image, the deployment's project and
# certificate), then drops to the unprivileged user `hyperdesk`
# (no capabilities, no way to regain any) and execs node: the server process never runs as root.
set -e
cd "$(dirname "$0")/.."
DATA_DIR="$(realpath -m "${DATA_DIR:-./data}")"
export DATA_DIR
if [ "$(id -u)" = 0 ]; then
  sh scripts/lxd/host-setup.sh
  sh scripts/server-cgroup.sh $$ || exit 1
  user="${HYPERDESK_USER:-hyperdesk}"
  exec setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- \
    node --enable-source-maps server/dist/main.js
fi
exec node --enable-source-maps server/dist/main.js
