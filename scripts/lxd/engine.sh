# What differs between the two engines the set-up drives, sourced by host-setup.sh and daemon.sh (one place, so the
# daemon's command line that daemon.sh starts and host-setup.sh looks for with pgrep is the same string).
# LXD_ENGINE: lxd (Debian's LXD 5.0, the default) or incus (Incus 6). Sets CLI, ENGINE_DIR, DAEMON, DAEMON_LOG and
# DAEMON_CMD; LXD_DIR / INCUS_DIR and LXD_LOG override the directory and the log.
ENGINE="${LXD_ENGINE:-lxd}"
case "$ENGINE" in
  lxd)
    CLI=lxc ENGINE_DIR="${LXD_DIR:-/var/lib/lxd}" DAEMON=lxd DAEMON_LOG="${LXD_LOG:-/var/log/lxd/lxd.log}"
    DAEMON_CMD="lxd --group lxd --logfile=$DAEMON_LOG" ;;
  incus)
    CLI=incus ENGINE_DIR="${INCUS_DIR:-/var/lib/incus}" DAEMON=/usr/libexec/incus/incusd DAEMON_LOG="${LXD_LOG:-/var/log/incus/incusd.log}"
    DAEMON_CMD="$DAEMON --group incus-admin --logfile=$DAEMON_LOG" ;;
  *) echo "LXD_ENGINE must be lxd or incus, not $ENGINE" >&2; exit 2 ;;
esac
export LXD_ENGINE="$ENGINE"
