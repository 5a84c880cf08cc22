#!/bin/sh
# npm start: install what is missing, build the web app and the server (TypeScript → server/dist/*.js, esbuild),
# then run the compiled server with plain node (scripts/run-server.sh: as root it first prepares LXD for the
# desktops, then runs the server as the unprivileged user hyperdesk): migrate and serve everything on PORT (3000).
set -e
cd "$(dirname "$0")/.."
sh scripts/ensure-deps.sh
sh scripts/build-web.sh
echo "Building the server..."
node scripts/build-server.mjs
exec sh scripts/run-server.sh
