#!/bin/sh
# Prepares this host's LXD for one Hyperdesk deployment (run as root; idempotent; prints what it does):
#   the packages, the daemon (started by hand where no systemd runs), a btrfs storage pool (quotas), the desktops'
#   bridge with its egress ACL, the desktop image, the deployment's own restricted project, and a client
#   certificate trusted for that project only, left in $DATA_DIR/lxd for the unprivileged server user.
# Environment: DATA_DIR (required, absolute), HYPERDESK_USER (hyperdesk), LXD_PROJECT (hd-<hash of DATA_DIR>),
#   LXD_POOL (hyperdesk), LXD_POOL_SIZE (40GiB, a loop file) or LXD_POOL_SOURCE (a block device or btrfs path),
#   LXD_NETWORK (hdbr0), LXD_SUBNET (10.251.0.1/24), LXD_ADDRESS (127.0.0.1:8443), MACHINE_EGRESS (internet|none),
#   LXD_HOST_ONLY (set: stop after the image, before the deployment's project and certificate),
#   LXD_ENGINE (lxd, Debian's LXD 5.0; or incus: Incus 6, from bookworm-backports on Debian 12, which this adds).
set -eu
# Nothing here reads input: `lxc … create` reads a YAML config from a stdin that is not a terminal, and would wait
# for ever on one that stays open (a pipe or socket from whatever started npm start).
exec </dev/null
here="$(cd "$(dirname "$0")" && pwd)"
: "${DATA_DIR:?DATA_DIR must be set}"
USER_NAME="${HYPERDESK_USER:-hyperdesk}"
PROJECT="${LXD_PROJECT:-hd-$(printf %s "$DATA_DIR" | sha256sum | cut -c1-10)}"
POOL="${LXD_POOL:-hyperdesk}"
NETWORK="${LXD_NETWORK:-hdbr0}"
SUBNET="${LXD_SUBNET:-10.251.0.1/24}"
ADDRESS="${LXD_ADDRESS:-127.0.0.1:8443}"
EGRESS="${MACHINE_EGRESS:-internet}"
. "$here/engine.sh"
. "$here/../apt.sh"
step() { echo "LXD: $*"; }
# A config key's value in what `lxc … show` printed (YAML; quotes LXD puts around "true" and the like dropped).
config_value() { printf '%s\n' "$1" | sed -n "s/^  $2: //p" | tr -d '"'; }
# `lxc … create …` for an object a `show` just reported missing. On a busy host that show once failed for an object
# that existed, and the create's "already exists" stopped a server's start: that answer means done.
create_once() {
  err="$($CLI "$@" 2>&1 >/dev/null)" && return 0
  case "$err" in *"already exists"*) return 0 ;; esac
  printf '%s\n' "$err" >&2
  return 1
}
# One set-up at a time on this host (servers started together would race to start the daemon or build the image).
mkdir -p /run/lock && exec 9>/run/lock/hyperdesk-lxd-setup.lock && flock 9

if ! command -v "$CLI" >/dev/null 2>&1 || ! command -v btrfs >/dev/null 2>&1 || ! command -v dnsmasq >/dev/null 2>&1 || ! command -v nft >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1 || ! command -v zstd >/dev/null 2>&1; then
  step "installing $ENGINE, btrfs-progs, dnsmasq-base, nftables, debootstrap, zstd"
  apt_get update -qq
  engine_pkgs="lxd lxcfs" engine_release=""
  if [ "$ENGINE" = incus ]; then
    engine_pkgs="incus-base incus-client lxcfs"
    # Debian 12 has Incus only in bookworm-backports (Debian 13 and Ubuntu 24.04 have it in main).
    if [ -z "$(apt-cache policy incus-base 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v none)" ] && grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release; then
      step "adding bookworm-backports for Incus"
      echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/hyperdesk-backports.list
      apt_get update -qq
      engine_release="-t bookworm-backports"
    fi
  fi
  # shellcheck disable=SC2086
  apt_get install -y -qq --no-install-recommends $engine_release $engine_pkgs debootstrap dnsmasq-base btrfs-progs nftables zstd openssl
fi

# The ids LXD maps containers to: from 65536 on, a multiple of the 65536 each isolated container takes. Debian's
# 100000 makes LXD 5.0 now and then give an isolated container the block at 65536, outside the range, which then
# fails to start ("newuidmap: uid range [0-65536) -> [65536-131072) not allowed").
ids_changed=""
for f in /etc/subuid /etc/subgid; do
  if ! grep -qx 'root:65536:1000000000' "$f" 2>/dev/null; then
    { grep -v '^root:' "$f" 2>/dev/null || true; echo 'root:65536:1000000000'; } > "$f.new" && mv "$f.new" "$f"
    ids_changed=1
  fi
done
# The daemon by its command line (scripts/lxd/daemon.sh): `pkill -x lxd` would kill every instance's monitor too.
if [ -n "$ids_changed" ] && pgrep -x -f -- "$DAEMON_CMD" >/dev/null; then
  step "restarting the LXD daemon for the new id range (instances keep running)"
  pkill -TERM -x -f -- "$DAEMON_CMD"; for _ in $(seq 1 100); do pgrep -x -f -- "$DAEMON_CMD" >/dev/null || break; sleep 0.1; done
fi

# lxcfs gives each desktop its own /proc/meminfo, cpuinfo and uptime; LXD looks for it when it starts.
mkdir -p /var/log/lxd /var/log/incus
if ! pgrep -x lxcfs >/dev/null; then
  # A host whose processes were all killed (a session's end, an OOM kill) keeps lxcfs's FUSE mount, now dead:
  # "Transport endpoint is not connected". Detach it before mounting afresh.
  if grep -q ' /var/lib/lxcfs ' /proc/mounts; then
    step "detaching the dead lxcfs mount"; umount -l /var/lib/lxcfs 2>/dev/null || true
  fi
  mkdir -p /var/lib/lxcfs
  setsid lxcfs /var/lib/lxcfs >/var/log/lxd/lxcfs.log 2>&1 < /dev/null 9>&- &
  for _ in $(seq 1 50); do mountpoint -q /var/lib/lxcfs && break; sleep 0.1; done
fi
sh "$here/daemon.sh" 9>&-
[ "$($CLI config get core.https_address)" = "$ADDRESS" ] || { step "API on https://$ADDRESS"; $CLI config set core.https_address "$ADDRESS"; }

# Each object is shown once and its state read from that (a later npm start changes nothing, and every `lxc` run
# costs 75-150 ms of CPU on a slow VM).
if ! pool_now="$($CLI storage show "$POOL" 2>/dev/null)"; then
  if [ -n "${LXD_POOL_SOURCE:-}" ]; then
    step "storage pool $POOL (btrfs on $LXD_POOL_SOURCE)"
    create_once storage create "$POOL" btrfs source="$LXD_POOL_SOURCE"
  else
    step "storage pool $POOL (btrfs on a ${LXD_POOL_SIZE:-40GiB} loop file)"
    create_once storage create "$POOL" btrfs size="${LXD_POOL_SIZE:-40GiB}"
  fi
  pool_now="$($CLI storage show "$POOL" 2>/dev/null)" || pool_now=""  # a busy daemon: driver unknown, /usr not shared
fi
pool_driver="$(printf '%s\n' "$pool_now" | sed -n 's/^driver: //p')"
# Home quotas are btrfs qgroup limits. A host whose processes were killed mid-operation can leave the qgroup
# accounting inconsistent, and then writes pass the limits: rescan (a second or two) so quotas hold again.
pool_dir="$ENGINE_DIR/storage-pools/$POOL"
if command -v btrfs >/dev/null && btrfs qgroup show "$pool_dir" 2>&1 | grep -q inconsistent; then
  step "storage pool $POOL: rescanning its quota accounting (it was inconsistent)"
  btrfs quota rescan -w "$pool_dir" >/dev/null 2>&1 || true
fi

# The desktops' egress: the internet (NAT) or nothing; never this host, other desktops, private ranges or cloud
# metadata. Replies to connections made to a desktop (the viewer's WebRTC checks) pass: the ACL is stateful.
acl_now="$($CLI network acl show hd-desktops 2>/dev/null)" || { create_once network acl create hd-desktops; acl_now=""; }
host_addrs="$(ip -4 -o addr show | awk '{print $4}' | cut -d/ -f1 | grep -v '^127\.' | sort -u | tr '\n' ',' | sed 's/,$//')"
blocked="0.0.0.0/8,10.0.0.0/8,100.64.0.0/10,127.0.0.0/8,169.254.0.0/16,172.16.0.0/12,192.0.0.0/24,192.0.2.0/24,192.168.0.0/16,198.18.0.0/15,198.51.100.0/24,203.0.113.0/24,224.0.0.0/4,240.0.0.0/4"
[ -n "$host_addrs" ] && blocked="$blocked,$host_addrs"
if [ "$EGRESS" = internet ]; then allow="- action: allow
  destination: 0.0.0.0/0
  state: enabled"; else allow=""; fi
acl="$(printf 'description: "Hyperdesk desktops - the internet only, never the host, other desktops or private ranges"\negress:\n- action: reject\n  destination: %s\n  state: enabled\n%s\ningress:\n- action: allow\n  state: enabled\n' "$blocked" "$allow")"
# Rewritten only when its rules differ (a rewrite makes LXD apply them to the bridge again): the rules are the lines
# from egress: to the next key that is not ingress: (LXD shows config: and used_by: after them).
rules() { awk '/^egress:/ { on = 1 } /^[a-z_]+:/ && !/^(egress|ingress):/ { on = 0 } on'; }
if [ "$(printf '%s\n' "$acl_now" | rules | md5sum)" != "$(printf '%s\n' "$acl" | rules | md5sum)" ]; then
  printf '%s\n' "$acl" | $CLI network acl edit hd-desktops
fi
if ! net_now="$($CLI network show "$NETWORK" 2>/dev/null)"; then
  step "network $NETWORK ($SUBNET, egress: $EGRESS)"
  # Made again when the engine's bridge set-up met a link that vanished while it listed the host's links (another
  # engine's containers stopping meanwhile: "Device "veth…" does not exist"); the failed attempt leaves no network.
  for attempt in 1 2 3; do
    err="$($CLI network create "$NETWORK" ipv4.address="$SUBNET" ipv4.nat=true ipv6.address=none 2>&1 >/dev/null)" && break
    case "$err" in *"already exists"*) break ;; *"does not exist"*) [ "$attempt" -lt 3 ] && sleep 1 && continue ;; esac
    printf '%s\n' "$err" >&2
    exit 1
  done
  net_now=""
fi
[ "$(config_value "$net_now" security.acls),$(config_value "$net_now" security.acls.default.egress.action),$(config_value "$net_now" security.acls.default.ingress.action)" = hd-desktops,reject,reject ] ||
  $CLI network set "$NETWORK" security.acls=hd-desktops security.acls.default.egress.action=reject security.acls.default.ingress.action=reject

step "desktop image"
mkdir -p "$DATA_DIR/lxd"
LXC="$CLI" IMAGE_ALIAS_OUT="$DATA_DIR/lxd/image" sh "$here/../../machine-image/build.sh"
# LXD_HOST_ONLY=1: what every deployment on this host shares is ready (npm test prepares it ahead of its tests).
[ -n "${LXD_HOST_ONLY:-}" ] && { step "ready (the host only: no project)"; exit 0; }

if ! project_now="$($CLI project show "$PROJECT" 2>/dev/null)"; then
  step "project $PROJECT for $DATA_DIR"
  create_once project create "$PROJECT" -c features.images=false -c features.profiles=true -c features.storage.volumes=true \
    -c features.networks=false -c restricted=true -c restricted.containers.nesting=block \
    -c restricted.containers.privilege=isolated -c restricted.containers.lowlevel=block \
    -c restricted.devices.disk=managed -c restricted.devices.nic=managed -c restricted.networks.access="$NETWORK" \
    -c restricted.devices.proxy=block -c restricted.devices.unix-char=block -c restricted.devices.unix-block=block \
    -c restricted.devices.unix-hotplug=block -c restricted.devices.usb=block -c restricted.devices.infiniband=block \
    -c restricted.devices.gpu=allow -c restricted.cluster.target=allow -c user.hyperdesk.data_dir="$DATA_DIR"
  # Read back for the checks below; where even that fails (a busy daemon), they set each key again.
  project_now="$($CLI project show "$PROJECT" 2>/dev/null)" || project_now=""
fi
# Disks: the project's own pool volumes only (Hyperdesk on Incus once also allowed a host path, for a shared /usr).
[ "$(config_value "$project_now" restricted.devices.disk)" = managed ] || $CLI project set "$PROJECT" restricted.devices.disk=managed
[ -z "$(config_value "$project_now" restricted.devices.disk.paths)" ] || $CLI project unset "$PROJECT" restricted.devices.disk.paths
# That host path's copy goes once no desktop of any project mounts it.
if [ -d /var/lib/hyperdesk/usr ] && all="$($CLI query '/1.0/instances?all-projects=true&recursion=1')" && ! printf '%s' "$all" | grep -q /var/lib/hyperdesk/usr/; then
  rm -rf /var/lib/hyperdesk/usr
fi
# In a cluster the server chooses each desktop's member (free capacity, its home's member): LXD refuses a restricted
# project's ?target= unless this allows it. Projects made before it get it here.
[ "$(config_value "$project_now" restricted.cluster.target)" = allow ] || $CLI project set "$PROJECT" restricted.cluster.target=allow

# The desktops' shared /usr: a volume of the project with the image's /usr, unmapped (its files are nobody's inside,
# so neither a tenant nor a desktop's root can change them), mounted read-only over each new desktop's /usr: all the
# desktops then share one copy of their programs and libraries in memory. Filled here, as root, on btrfs (a reflink
# copy of the image's volume, well under a second) or dir pools; elsewhere the desktops keep their own /usr.
share_usr() {
  case "$pool_driver" in btrfs|dir) ;; *) step "the desktops keep their own /usr (pool driver ${pool_driver:-unknown})"; return 0 ;; esac
  image="$(cat "$DATA_DIR/lxd/image")"
  fp="$($CLI image info "$image" | sed -n 's/^Fingerprint: //p')" && [ -n "$fp" ] || return 1
  vol="usr-$(printf %.16s "$fp")"
  # $target: nothing, or --target=<this member> (in a cluster a local pool's volumes are per member)
  target=""; $CLI cluster list >/dev/null 2>&1 && target="--target=$($CLI info | sed -n 's/^ *server_name: //p' | head -n1)"
  if [ "$($CLI storage volume get "$POOL" "$vol" user.hyperdesk.ready --project "$PROJECT" $target 2>/dev/null)" != true ]; then
    step "the desktops' shared /usr (volume $vol)"
    $CLI storage volume delete "$POOL" "$vol" --project "$PROJECT" $target >/dev/null 2>&1 || true
    $CLI storage volume create "$POOL" "$vol" --project "$PROJECT" $target security.unmapped=true >/dev/null || return 1
    src="$ENGINE_DIR/storage-pools/$POOL/images/$fp/rootfs/usr" seed=""
    if [ ! -d "$src" ]; then
      # No image volume on this pool yet (or a dir pool): a new instance of the image holds the same files.
      seed="usr-seed-$(printf %.16s "$fp")"  # not hd-…: never taken for a machine's desktop
      $CLI delete --force "$seed" --project "$PROJECT" >/dev/null 2>&1 || true
      # (lxc warns on stderr that the instance has no network: it needs none; its errors still show.)
      err="$($CLI init "$image" "$seed" --project "$PROJECT" $target --no-profiles -s "$POOL" -c security.idmap.isolated=true 2>&1 >/dev/null)" ||
        { printf '%s\n' "$err" >&2; return 1; }
      src="$ENGINE_DIR/storage-pools/$POOL/containers/${PROJECT}_$seed/rootfs/usr"
    fi
    cp -a "$src/." "$ENGINE_DIR/storage-pools/$POOL/custom/${PROJECT}_$vol/" || return 1
    [ -z "$seed" ] || $CLI delete "$seed" --project "$PROJECT" >/dev/null || return 1
    $CLI storage volume set "$POOL" "$vol" user.hyperdesk.ready=true --project "$PROJECT" $target || return 1
  fi
  printf '%s\n' "$vol" > "$DATA_DIR/lxd/usr-volume"
  # An older image's /usr goes once no desktop uses it (a desktop keeps the /usr of its image until it is reset).
  for old in $($CLI storage volume list "$POOL" --project "$PROJECT" $target --format csv -c tnu | awk -F, -v v="$vol" '$1 == "custom" && $2 ~ /^usr-/ && $2 != v && $3 == 0 {print $2}'); do
    $CLI storage volume delete "$POOL" "$old" --project "$PROJECT" $target >/dev/null 2>&1 && step "removed the older shared /usr $old"
  done
  return 0
}
rm -f "$DATA_DIR/lxd/usr" "$DATA_DIR/lxd/usr-volume"
share_usr || step "the desktops keep their own /usr (the shared one could not be made; see above)"

# The server's unprivileged user, owner of the data dir; and the certificate LXD trusts for this project only.
id "$USER_NAME" >/dev/null 2>&1 || useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$USER_NAME"
mkdir -p "$DATA_DIR/lxd"
certs="$DATA_DIR/lxd"
if [ ! -s "$certs/client.crt" ] || [ ! -s "$certs/client.key" ]; then
  step "client certificate for project $PROJECT"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:secp384r1 -nodes -days 3650 -subj "/CN=hyperdesk-$PROJECT" \
    -keyout "$certs/client.key.tmp" -out "$certs/client.crt.tmp" 2>/dev/null
  mv "$certs/client.key.tmp" "$certs/client.key" && mv "$certs/client.crt.tmp" "$certs/client.crt"
fi
fingerprint="$(openssl x509 -in "$certs/client.crt" -noout -fingerprint -sha256 | cut -d= -f2 | tr -d : | tr 'A-F' 'a-f')"
if ! $CLI query "/1.0/certificates/$fingerprint" >/dev/null 2>&1; then
  trust_add="config trust add"; [ "$ENGINE" = incus ] && trust_add="config trust add-certificate"
  # shellcheck disable=SC2086
  $CLI $trust_add "$certs/client.crt" --restricted --projects "$PROJECT" --name "hyperdesk-$PROJECT" >/dev/null
fi
cp "$ENGINE_DIR/server.crt" "$certs/server.crt"
printf 'LXD_URL=https://%s\nLXD_PROJECT=%s\nLXD_IMAGE=%s\n' "$ADDRESS" "$PROJECT" "$(cat "$certs/image")" > "$certs/env"
chmod 0600 "$certs/client.key"
[ "$(stat -c %U "$DATA_DIR")" = "$USER_NAME" ] || chown -R "$USER_NAME:$USER_NAME" "$DATA_DIR"
chown -R "$USER_NAME:$USER_NAME" "$certs"
step "ready (project $PROJECT)"
