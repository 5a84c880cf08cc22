#!/bin/sh
# Builds the web app (Vite → web/dist) unless nothing it is built from changed since its last build: a later
# `npm start` then skips 4-8 s of work (more on a slow host). What it is built from: web/'s sources, the contract
# package, and the installed packages (npm ci rewrites node_modules/.package-lock.json). The stamp is taken before the
# build and kept only when the build succeeds, so an edit made meanwhile or a failed build means a build next time.
# FORCE=1 builds anyway.
set -e
cd "$(dirname "$0")/.."
stamp=node_modules/.cache/hyperdesk/web-built
inputs="web/index.html web/package.json web/public web/src web/tsconfig.json web/vite.config.ts contract package-lock.json node_modules/.package-lock.json"
changed() {
  [ -f "$stamp" ] && [ -f web/dist/index.html ] || return 0
  # shellcheck disable=SC2086
  [ -n "$(find $inputs -path contract/node_modules -prune -o -newer "$stamp" -print 2>/dev/null | head -n 1)" ]
}
if [ -z "${FORCE:-}" ] && ! changed; then
  echo "The web app is up to date (web/dist)."
  exit 0
fi
echo "Building the web app..."
mkdir -p "$(dirname "$stamp")"
touch "$stamp.new"
npm run build --silent >/dev/null
mv "$stamp.new" "$stamp"
