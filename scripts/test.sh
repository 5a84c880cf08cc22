#!/bin/sh
# npm test: typecheck, lint, unit and API tests (PGlite, and PostgreSQL too when DATABASE_URL is set),
# then browser tests in Debian Chromium against the real server.
set -e
cd "$(dirname "$0")/.."
HYPERDESK_NEED_BROWSER=1 sh scripts/ensure-deps.sh
start=$(date +%s)
reports="$(pwd)/test-results/reports"
rm -rf "$reports" && mkdir -p "$reports"
# The host's LXD (packages, daemon, pool, network, desktop image: minutes on a fresh machine) is prepared while the
# checks below run; each test deployment's own set-up waits for it (host-setup.sh takes a lock) and finds it done.
if [ "$(id -u)" = "0" ]; then
  host_dir=$(mktemp -d)
  ( DATA_DIR="$host_dir" LXD_HOST_ONLY=1 sh scripts/lxd/host-setup.sh > test-results/host-setup.log 2>&1 || echo "host set-up failed: see test-results/host-setup.log" >&2; rm -rf "$host_dir" ) &
fi
# Each stage also writes a JSON report; the totals are printed at the end.
run() { name=$1; shift; npx vitest run "$@" --reporter=default --reporter=json --outputFile="$reports/$name.json"; }
echo "== typecheck"; npm run typecheck --silent
echo "== lint"; npm run lint --silent
echo "== web unit tests"; run web --root web
echo "== bench logic tests"; run bench --root bench
# Tests that spawn the real process (shutdown, reconciler crash, browser tests) run the compiled server, as npm start does.
echo "== server build"; node scripts/build-server.mjs
echo "== unit + API tests on PGlite"
env -u DATABASE_URL npx vitest run --root server --reporter=default --reporter=json --outputFile="$reports/server-pglite.json"
if [ -n "${DATABASE_URL:-}" ]; then
  echo "== API tests on PostgreSQL ($DATABASE_URL; the tests that never open a database ran above)"
  DB_TESTS_ONLY=1 run server-postgres --root server
fi
echo "== web build"; npm run build --silent >/dev/null
echo "== browser tests"
run e2e --root e2e
echo "== all tests passed in $(( $(date +%s) - start ))s"
node -e '
const fs = require("fs"), dir = process.argv[1];
let p = 0, f = 0, s = 0;
for (const file of fs.readdirSync(dir)) {
  const r = JSON.parse(fs.readFileSync(dir + "/" + file, "utf8"));
  p += r.numPassedTests; f += r.numFailedTests; s += r.numPendingTests + (r.numTodoTests || 0);
}
console.log(`Tests: ${p} passed, ${f} failed` + (s ? `, ${s} skipped` : ""));
' "$reports"
