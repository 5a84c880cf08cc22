#!/bin/sh
# Builds the desktop image's base layer: a Debian bookworm root file system from Debian's packages (packages.txt),
# packed as OUT (a .tar.zst of the rootfs). Run as root. Reproducible from the same package archive.
set -eu
OUT="$1"
MIRROR="${DEBIAN_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d /var/tmp/hyperdesk-rootfs.XXXXXX)"
trap 'umount -R "$work/rootfs/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
pkgs="$(grep -v '^#' "$here/packages.txt" | tr '\n' ' ')"
echo "  debootstrap bookworm from $MIRROR"
debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$MIRROR" > "$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
echo "  installing the desktop's packages (the longest step: several minutes)"
printf '#!/bin/sh\nexit 101\n' > "$work/rootfs/usr/sbin/policy-rc.d" && chmod +x "$work/rootfs/usr/sbin/policy-rc.d"
mount -t proc proc "$work/rootfs/proc"
chroot "$work/rootfs" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs" > "$work/apt.log" 2>&1 || { tail -20 "$work/apt.log" >&2; exit 1; }
umount "$work/rootfs/proc"
rm -f "$work/rootfs/usr/sbin/policy-rc.d"
# Optional inputs an operator provides for a real GPU image (docs/machine-image.md): NVIDIA's user-space driver and
# Unreal Engine, installed into the rootfs here.
if [ -n "${NVIDIA_DRIVER_RUN:-}" ]; then
  cp "$NVIDIA_DRIVER_RUN" "$work/rootfs/tmp/nvidia.run"
  chroot "$work/rootfs" sh /tmp/nvidia.run --silent --no-kernel-module --no-questions --ui=none
  rm -f "$work/rootfs/tmp/nvidia.run"
fi
if [ -n "${UNREAL_ENGINE_TARBALL:-}" ]; then
  mkdir -p "$work/rootfs/opt/UnrealEngine"
  tar -xf "$UNREAL_ENGINE_TARBALL" -C "$work/rootfs/opt/UnrealEngine"
fi
rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/usr/share/doc" "$work/rootfs/usr/share/man"
tar -C "$work/rootfs" --numeric-owner -cf - . | zstd -q -T0 -3 -o "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
