#!/bin/sh
# Makes sure the LXD daemon of $LXD_DIR (/var/lib/lxd) answers, where no systemd runs it: starts it when it is not
# running, and replaces one that runs but no longer answers. Running instances keep running either way (their
# monitors are processes of their own). Prints what it does; on failure, the end of the daemon's log.
# Environment: LXD_DIR (/var/lib/lxd), LXD_LOG (/var/log/lxd/lxd.log), LXD_ENGINE (lxd, or incus: incusd, its log
#   /var/log/incus/incusd.log).
#
# The daemon is found by the exact command line this script starts it with. `pgrep -x lxd` would also find every
# running instance's monitor ("[lxc monitor] …", whose process name is lxd too) and other daemons (a test
# cluster's): a host whose daemon had died while desktops ran would then wait for ever for one that never starts.
set -eu
. "$(dirname "$0")/engine.sh"
LOG="$DAEMON_LOG" CMD="$DAEMON_CMD"
step() { echo "LXD: $*"; }
# A stopped or deadlocked daemon still accepts connections on its socket: a query without a time limit would wait for ever.
answers() { timeout 10 "$CLI" query /1.0 >/dev/null 2>&1; }
daemon_pids() { pgrep -x -f -- "$CMD" || true; }
log_tail() { [ -f "$LOG" ] && tail -n "${1:-20}" "$LOG" | sed 's/^/  lxd.log: /'; }

answers && exit 0
mkdir -p "$(dirname "$LOG")"
if [ -n "$(daemon_pids)" ] && ! timeout $(( ${LXD_HUNG_AFTER:-30} + 5 )) "$DAEMON" waitready --timeout="${LXD_HUNG_AFTER:-30}" >/dev/null 2>&1; then
  step "the LXD daemon runs but does not answer: replacing it (instances keep running)"
  log_tail 10 || true
  kill -KILL $(daemon_pids) 2>/dev/null || true
  for _ in $(seq 1 100); do [ -z "$(daemon_pids)" ] && break; sleep 0.1; done
fi
if [ -z "$(daemon_pids)" ]; then
  if [ -s "$LOG" ]; then step "the LXD daemon had stopped; its log ended with:"; log_tail 10 || true; fi
  # It would SIGKILL whatever process now has a pid its helpers had before they died (stale-pids.sh says why).
  sh "$(dirname "$0")/stale-pids.sh" "$ENGINE_DIR"
  step "starting the LXD daemon"
  setsid $CMD >/dev/null 2>&1 < /dev/null 9>&- &
fi
if ! "$DAEMON" waitready --timeout=120; then
  echo "LXD did not start; the end of $LOG:" >&2
  log_tail 30 >&2 || true
  exit 1
fi
