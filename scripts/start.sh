#!/bin/sh
# npm start: install what is missing, build the web app, migrate and serve everything on PORT (default 3000).
set -e
cd "$(dirname "$0")/.."
sh scripts/ensure-deps.sh
echo "Building the web app..."
npm run build --silent >/dev/null
exec node --import tsx server/src/main.ts
