#!/bin/sh
# Removes an engine's pid files that no longer name their process. Usage: stale-pids.sh ENGINE_DIR
#
# LXD and Incus record each helper they start (a bridge's dnsmasq, forkdns, a device's helper) in a pid file
# ("name: dnsmasq … pid: 6625") and, when they start the network or device again, SIGKILL that pid without checking
# what it is now. On a host whose processes all died (a reboot onto a disk that kept /var/lib, a restored snapshot,
# a member whose host went away) the pid has been handed out again: the daemon, started afresh, killed whatever
# process had it (on a CI host, the very `incusd waitready` that waited for it). Run before the daemon starts: a
# file whose pid no longer runs the recorded program with its recorded first argument goes; one whose helper still
# runs stays, for the daemon to replace it.
set -eu
dir="${1:?usage: stale-pids.sh ENGINE_DIR}"
for f in "$dir"/networks/*/*.pid "$dir"/devices/*/*.pid; do
  [ -f "$f" ] || continue
  pid="$(sed -n 's/^pid: *\([0-9][0-9]*\) *$/\1/p' "$f")"
  name="$(sed -n 's/^name: *//p' "$f")"
  arg="$(sed -n "s/^args: *\[ *'\{0,1\}\([^],']*\).*/\1/p" "$f")"
  [ -n "$pid" ] && [ -n "$name" ] || continue
  # What the pid runs now: its program and first argument (dnsmasq --keep-in-foreground; lxd forkdns, where another
  # daemon is lxd too). An instance's monitor ("[lxc monitor] …", one string) matches nothing.
  # shellcheck disable=SC2046
  set -f; set -- $(tr '\0' '\n' 2>/dev/null < "/proc/$pid/cmdline" | head -n 2); set +f
  if [ $# -eq 0 ] || [ "${1##*/}" != "${name##*/}" ] || [ "${2:-}" != "$arg" ]; then
    echo "LXD: removing the stale pid file $f (pid $pid no longer runs ${name##*/})"
    rm -f -- "$f"
  fi
done
