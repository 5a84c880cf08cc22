#!/bin/sh
# Gives the server's process ($1) its share of the host's CPU before it drops root (scripts/run-server.sh).
#
# Each LXD desktop is a cgroup of its own, and the kernel shares a busy CPU between cgroups, not processes: the server,
# left in the root cgroup, weighed as much as ONE desktop. When the 40 desktops of a class woke at once, the server
# that hands out their tickets and relays their screens got about a 41st of the host. Here it gets a cgroup
# ("hyperdesk", shared by the deployments of this host) weighted like SERVER_CPU_WEIGHT desktops (default 20: under
# full contention from 40 busy desktops, a third of the host). The weight only matters while the CPU is contended:
# an idle server takes nothing from the desktops. SERVER_CPU_WEIGHT=0 leaves the process where it is.
#
# Only from the root cgroup: a service manager that placed the process (systemd: set CPUWeight= in its unit) keeps it.
pid=$1
n=${SERVER_CPU_WEIGHT:-20}
case $n in '' | *[!0-9]*) echo "SERVER_CPU_WEIGHT must be a whole number of desktops, got '$n'" >&2; exit 1 ;; esac
[ "$n" -gt 0 ] || exit 0
# A host that lets nobody write its cgroups (some containers) runs the server as before, with a warning.
put() { { echo "$1" > "$2"; } 2>/dev/null || { echo "CPU: could not write $2; the server shares the CPU like one desktop" >&2; exit 0; }; }
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  # cgroup v2: a desktop weighs cpu.weight 100 (the default; LXD sets no other).
  grep -qxE '0::/(hyperdesk)?' "/proc/$pid/cgroup" || { echo "CPU: the server stays in the cgroup its service manager gave it"; exit 0; }
  grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || put +cpu /sys/fs/cgroup/cgroup.subtree_control
  dir=/sys/fs/cgroup/hyperdesk
  mkdir -p "$dir" 2>/dev/null || true
  w=$((n * 100)); [ "$w" -le 10000 ] || w=10000
  put "$w" "$dir/cpu.weight"
elif [ -d /sys/fs/cgroup/cpu ]; then
  # cgroup v1: a desktop weighs cpu.shares 1024 (the default; LXD sets no other).
  grep -qE '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:/(hyperdesk)?$' "/proc/$pid/cgroup" || { echo "CPU: the server stays in the cgroup its service manager gave it"; exit 0; }
  dir=/sys/fs/cgroup/cpu/hyperdesk
  mkdir -p "$dir" 2>/dev/null || true
  s=$((n * 1024)); [ "$s" -le 262144 ] || s=262144
  put "$s" "$dir/cpu.shares"
else
  echo "CPU: no cgroup CPU controller here; the server shares the CPU like one desktop" >&2
  exit 0
fi
put "$pid" "$dir/cgroup.procs"
echo "CPU: the server weighs as much as $n desktops (cgroup $dir)"
