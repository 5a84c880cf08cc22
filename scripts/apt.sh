# Sourced by the scripts that install Debian packages. apt_get ARGS: apt-get without prompts, its output kept back
# unless it fails, that waits while another apt or dpkg holds the package locks (on a fresh Ubuntu host
# unattended-upgrades runs for minutes after boot; a second installer may run beside npm start) instead of failing at
# once. apt 2.6's DPkg::Lock::Timeout covers dpkg's lock only, not `apt-get update`'s lists lock, hence the loop.
# APT_LOCK_TRIES (300) is how many times to try, APT_LOCK_STEP (2) how many seconds between tries.
apt_get() {
  apt_tries=0
  while :; do
    apt_err="$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=10 "$@" 2>&1 >/dev/null)" && return 0
    case "$apt_err" in
      *"Could not get lock"* | *"Unable to lock"* | *"Unable to acquire the dpkg frontend lock"*) ;;
      *) printf '%s\n' "$apt_err" >&2; return 1 ;;
    esac
    apt_tries=$((apt_tries + 1))
    if [ "$apt_tries" -ge "${APT_LOCK_TRIES:-300}" ]; then
      printf '%s\n' "$apt_err" >&2
      return 1
    fi
    [ "$apt_tries" = 1 ] && echo "Waiting for another package manager to finish (apt-get $1)..." >&2
    sleep "${APT_LOCK_STEP:-2}"
  done
}
