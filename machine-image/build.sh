#!/bin/sh
# Builds the desktop image and imports it into LXD as `hyperdesk-desktop-<recipe>` (run as root; idempotent).
# Each recipe has its own alias, so deployments of different versions on one host each create their desktops from
# their own image and never rebuild or delete the other's; the images of the three recipes built or used last are
# kept, older ones deleted. IMAGE_ALIAS names one alias instead (replaced at each recipe change). IMAGE_ALIAS_OUT:
# a file to write the alias to (host-setup.sh passes it on to the server); IMAGE_PRINT_ALIAS=1 only prints it.
# Two layers, each cached under IMAGE_CACHE (default /var/cache/hyperdesk/images, outside the clone) and rebuilt
# only when its recipe changes: the base (Debian bookworm and the packages in packages.txt: minutes) and the
# desktop layer (its init, the session, the streaming agent: seconds). Prints what it does.
# Beside it, `<alias>-shared-usr`: the same image with /usr left empty, for desktops that mount the project's shared
# /usr over their own (host-setup.sh). A new desktop's first start remaps the owner of every file of its own root (LXD
# 5.0 cannot use idmapped mounts on kernels from 6.9 on), and /usr is 86% of those files: 4.6 s of the first start.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cache="${IMAGE_CACHE:-/var/cache/hyperdesk/images}"
LXC="${LXC:-lxc}"
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
base_hash="$(hash_of "$here/packages.txt" "$here/build-base.sh")"
base="$cache/base-$base_hash.tar.zst"
recipe="$( (echo "$base_hash"; cat "$here/build.sh" "$here/desktop-session.sh" "$here/init.sh" "$here/machine-name.sh" "$here/udhcpc.sh" "$repo"/server/agent/*.py) | sha256sum | cut -c1-16)"
ALIAS="${IMAGE_ALIAS:-hyperdesk-desktop-$recipe}"
if [ -n "${IMAGE_PRINT_ALIAS:-}" ]; then echo "$ALIAS"; exit 0; fi
mkdir -p "$cache"
# One build at a time on this host (deployments started together would import the same recipe twice).
exec 8>"$cache/.build.lock" && flock 8
done_with() {
  [ -n "${IMAGE_ALIAS_OUT:-}" ] && printf '%s\n' "$ALIAS" > "$IMAGE_ALIAS_OUT"
  [ -n "${IMAGE_ALIAS:-}" ] && return 0
  # The recipes built or used last keep their images; the others go (desktops already created keep running).
  echo "$(date +%s) $ALIAS" >> "$cache/used" && tail -n 50 "$cache/used" > "$cache/used.tmp" && mv "$cache/used.tmp" "$cache/used"
  keep="$(sort -rn "$cache/used" | awk '!seen[$2]++ {print $2}' | head -n 3)"
  for a in $($LXC image alias list --format csv 2>/dev/null | cut -d, -f1 | grep '^hyperdesk-desktop-'); do
    printf '%s\n' "$keep" | grep -qx "${a%-shared-usr}" || { $LXC image delete "$a" >/dev/null 2>&1 && echo "  removed the older desktop image $a"; } || true
  done
}
SLIM="$ALIAS-shared-usr"
described() { $LXC image info "$1" 2>/dev/null | sed -n 's/^ *description: //p'; }
need_image=1
[ "$(described "$ALIAS")" = "Hyperdesk desktop $recipe" ] && [ "$(described "$SLIM")" = "Hyperdesk desktop $recipe, /usr shared" ] && need_image=""
if [ -z "$need_image" ]; then
  echo "  desktop image $recipe is current"
  done_with
  exit 0
fi
if [ ! -f "$base" ]; then
  echo "  building the base layer $base_hash (Debian packages; about 5-8 minutes the first time)"
  t0=$(date +%s)
  sh "$here/build-base.sh" "$base"
  echo "  base layer built in $(( $(date +%s) - t0 )) s: $(du -h "$base" | cut -f1)"
fi
echo "  building the desktop layer $recipe"
work="$(mktemp -d /var/tmp/hyperdesk-image.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/rootfs"
zstd -dc "$base" | tar -C "$work/rootfs" --numeric-owner -xf -
r="$work/rootfs"
chroot "$r" sh -c 'getent passwd user >/dev/null || useradd --uid 1000 --user-group --create-home --shell /bin/bash user'
mkdir -p "$r/opt/hyperdesk" "$r/opt/hyperdesk-agent"
install -m 0755 "$here/desktop-session.sh" "$r/opt/hyperdesk/desktop-session.sh"
install -m 0644 "$repo"/server/agent/*.py "$r/opt/hyperdesk-agent/"
install -m 0755 "$here/init.sh" "$r/opt/hyperdesk/init"
install -m 0755 "$here/udhcpc.sh" "$r/opt/hyperdesk/udhcpc.sh"
install -m 0644 "$here/machine-name.sh" "$r/opt/hyperdesk/machine-name.sh"
mkdir -p "$r/sbin" && ln -sf /opt/hyperdesk/init "$r/sbin/init"
echo hyperdesk > "$r/etc/hostname"
# The init's tmpfs mounts (one `mount -a`): /run and /tmp, and /dev/shm in LXD's /dev.
cat > "$r/etc/fstab" <<'EOF'
tmpfs /run tmpfs mode=0755,nosuid,nodev,size=64m 0 0
tmpfs /tmp tmpfs mode=1777,nosuid,nodev,size=1g 0 0
tmpfs /dev/shm tmpfs mode=1777,nosuid,nodev,size=512m,X-mount.mkdir 0 0
EOF
ln -sf /run/resolv.conf "$r/etc/resolv.conf"
# The GStreamer plugin registry, built once here instead of at every agent start.
mkdir -p "$r/var/cache/gstreamer-1.0"
chroot "$r" env GST_REGISTRY=/var/cache/gstreamer-1.0/registry.bin gst-inspect-1.0 coreelements >/dev/null 2>&1 || true
chmod 0755 "$r/var/cache/gstreamer-1.0"
chmod 0644 "$r/var/cache/gstreamer-1.0/registry.bin" 2>/dev/null || true
# Fontconfig's caches made again here: each names its font directory's mtime to the nanosecond, and the layers' tar
# archives keep mtimes to the second, so those Debian's packages made no longer matched and every program of a new
# home scanned the fonts again (about 0.4 s of CPU at its first start: the panel, the window manager, the file manager
# and the terminal each). Also the agent's Python compiled once here (the desktop's user may not write beside it).
# fc-cache once failed on a busy host ("urw-base35: failed to write cache", in a `.ci/run` while Incus was installed
# beside LXD) and took the whole build with it: it is tried three times, and a build without the caches goes on (the
# desktop's programs then scan the fonts at a new home's first start: slower, not broken).
fonts_cached=""
for try in 1 2 3; do
  chroot "$r" fc-cache --system-only --really-force >/dev/null 2>"$work/fc-cache.err" && { fonts_cached=1; break; }
done
[ -n "$fonts_cached" ] || { sed 's/^/  /' "$work/fc-cache.err"; echo "  warning: the fonts' caches could not be made (above); the image goes on without them"; }
chroot "$r" python3 -m compileall -q /opt/hyperdesk-agent >/dev/null
# The package database (and ghostscript's font maps) live beside what they describe, in /usr: a desktop mounts the
# project's shared /usr read-only over its own, and a new desktop's first start remaps the owner of every file of its
# own root (LXD 5.0), where /var/lib/dpkg was 2,369 of the 3,590 files left (0.2 s of a first start on a slow 2-core
# VM). Nothing in a desktop installs packages: its /usr is read-only. apt's caches (75 MB) go: apt makes them again.
mkdir -p "$r/usr/lib/hyperdesk"
for d in dpkg ghostscript; do
  [ -L "$r/var/lib/$d" ] || { mv "$r/var/lib/$d" "$r/usr/lib/hyperdesk/$d" && ln -s "/usr/lib/hyperdesk/$d" "$r/var/lib/$d"; }
done
rm -f "$r"/var/cache/apt/*.bin
# The panel without its launcher (it offered only tint2's own settings tool): looking up the launcher's icons with no
# icon cache in a new home cost 0.3 s of CPU at its first start.
sed -e '/^launcher_item_app/d' -e '/^panel_items/s/L//' "$r/etc/xdg/tint2/tint2rc" > "$r/opt/hyperdesk/tint2rc"
# Openbox's own configuration, but the demo and the file manager never take the focus from the terminal.
sed 's#</applications>#<application title="glxgears"><focus>no</focus></application><application name="pcmanfm"><focus>no</focus></application></applications>#' \
  "$r/etc/xdg/openbox/rc.xml" > "$r/opt/hyperdesk/openbox.xml"
# import_image ALIAS DESCRIPTION [TAR OPTION…]: the rootfs as an image under ALIAS (an older one of that alias goes).
import_image() {
  alias=$1 description=$2
  shift 2
  printf 'architecture: %s\ncreation_date: %s\nproperties:\n  description: %s\n  os: debian\n  release: bookworm\n' \
    "$(uname -m)" "$(date +%s)" "$description" > "$work/metadata.yaml"
  tar -C "$work" -czf "$work/meta.tar.gz" metadata.yaml
  tar -C "$r" --numeric-owner "$@" -cf - . | zstd -q -f -T0 -3 -o "$work/rootfs.tar.zst"
  echo "  $alias: $(du -h "$work/rootfs.tar.zst" | cut -f1) compressed"
  old="$($LXC image list "$alias" --format csv -c f 2>/dev/null | head -n1)"
  [ -n "$old" ] && $LXC image alias delete "$alias" >/dev/null 2>&1 || true
  $LXC image import "$work/meta.tar.gz" "$work/rootfs.tar.zst" --alias "$alias" >/dev/null
  [ -n "$old" ] && $LXC image delete "$old" >/dev/null 2>&1 || true
}
echo "  desktop image: $(du -sh "$r" | cut -f1) unpacked, of it /usr $(du -sh "$r/usr" | cut -f1)"
import_image "$ALIAS" "Hyperdesk desktop $recipe"
import_image "$SLIM" "Hyperdesk desktop $recipe, /usr shared" --exclude='./usr/?*'
echo "  imported as $ALIAS and $SLIM"
done_with
