#!/bin/bash
# PID 1 of a desktop instance (/sbin/init): everything a desktop needs and nothing else (no systemd, journald, udev,
# D-Bus or resolver daemons: each desktop would pay their start and memory). LXD has mounted /proc, /sys and /dev.
# It mounts /run and /tmp, brings up the network (DHCP from the bridge's dnsmasq, in the background: the desktop
# does not wait for it), writes the machine's name, and runs the desktop session as `user`, again whenever it ends.
# LXD's clean stop (SIGPWR) and a forced one both end everything.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Shell builtins where a program would do, and one program where it would do for several (each program's start is
# ~10 ms of CPU on a 2-core Xeon VM and 30 ms on an EPYC one while 40 desktops of a class start on the same cores).
# /run, /tmp and /dev/shm: the image's /etc/fstab (build.sh), all three in one `mount -a`.
mount -a
hostname hyperdesk  # /proc/sys/kernel/hostname is not writable here: its owner is the host's root
# Both links in one `ip` (-force: an instance without a NIC still gets its loopback).
ip -force -batch - <<< $'link set lo up\nlink set eth0 up' 2>/dev/null
busybox udhcpc -i eth0 -f -S -s /opt/hyperdesk/udhcpc.sh >/dev/null 2>&1 &
# The machine's display name (machine-name.sh), from the guest API: /dev/lxd under LXD, /dev/incus under Incus.
# Written while the run dir is still root's: nothing the user runs can plant a link where root writes.
install -d -m 0700 /run/hyperdesk
. /opt/hyperdesk/machine-name.sh
guest_api=/dev/lxd/sock; [ -S "$guest_api" ] || guest_api=/dev/incus/sock
machine_name "$guest_api" /run/hyperdesk/name
# The run dir, and the home (a storage volume: a new one belongs to root), the user's own, not recursively (the home
# may be large). Neither is a path the user could have replaced: /run and /home are root's.
install -d -o user -g user -m 0700 /run/hyperdesk /home/user
trap 'kill -TERM -1 2>/dev/null; exit 0' PWR TERM INT
again=
while :; do
  # What a session that ended left behind. Not before the first: nothing of the user's runs yet but what the server
  # started through LXD's exec at once (the desktop's link, which reports when the desktop first answers).
  [ -n "$again" ] && pkill -KILL -u user 2>/dev/null
  again=1
  # An empty environment (exec -c: the session sets its own), but for the clock's zone: TZ, which the server sets in
  # this init's environment (the instance's environment.TZ: the machine's country's zone).
  ( exec -c /usr/bin/setpriv --reuid=user --regid=user --init-groups --inh-caps=-all -- /opt/hyperdesk/desktop-session.sh "${TZ:-UTC}" ) \
    </dev/null >/dev/null 2>&1 &
  wait $!
  read -t 0.2 <> <(:) || true
done
