#!/bin/sh
# Removes an engine's pid files that no longer name their process. Usage: stale-pids.sh ENGINE_DIR
#
# LXD and Incus record each helper they start (a bridge's dnsmasq, forkdns, a device's helper) in a pid file
# ("name: dnsmasq … pid: 6625") and, when they start the network or device again, SIGKILL that pid without checking
# what it is now. On a host whose processes all died (a reboot onto a disk that kept /var/lib, a restored snapshot,
# a member whose host went away) the pid has been handed out again: the daemon, started afresh, killed whatever
# process had it (on a CI host, the very `incusd waitready` that waited for it). Run before the daemon starts: a
# file whose pid runs no program of the recorded name goes; one whose helper still runs stays, for the daemon to
# replace it.
set -eu
dir="${1:?usage: stale-pids.sh ENGINE_DIR}"
for f in "$dir"/networks/*/*.pid "$dir"/devices/*/*.pid; do
  [ -f "$f" ] || continue
  pid="$(sed -n 's/^pid: *\([0-9][0-9]*\) *$/\1/p' "$f")"
  name="$(sed -n 's/^name: *//p' "$f")"
  [ -n "$pid" ] && [ -n "$name" ] || continue
  running="$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | head -n 1 || true)"
  if [ -z "$running" ] || [ "$(basename -- "$running")" != "$(basename -- "$name")" ]; then
    echo "LXD: removing the stale pid file $f (pid $pid no longer runs ${name##*/})"
    rm -f -- "$f"
  fi
done
