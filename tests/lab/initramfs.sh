#!/usr/bin/env bash
# Builds (or reuses) the lab's initramfs for one installed Debian kernel and prints its path.
#
#   tests/lab/initramfs.sh [KERNEL_VERSION]
#
# The initramfs holds only busybox-static and the modules needed to mount the host's root over 9p with a
# tmpfs overlay (virtio, 9p, overlay). The module list and its order come from `modprobe -S VER -D`, so the
# dependencies of the installed kernel decide, not a hand-kept list. Everything else (rdma_rxe, nvme_rdma,
# nvmet, ...) is loaded later from the host's /lib/modules, seen through 9p.
#
# The result is cached under NVMF_LAB_CACHE (default tests/lab/.cache) and rebuilt only when its inputs
# change: the kernel version, the modules' files, busybox, or this script. Concurrent callers are serialised
# with flock, and the file is replaced atomically.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=kernel.sh
. "$HERE/kernel.sh"
KVER=${1:-$(lab_kernel_version)}
CACHE=${NVMF_LAB_CACHE:-$HERE/.cache}
BUSYBOX=${NVMF_LAB_BUSYBOX:-/bin/busybox}
# Modules whose dependency closure mounts the root: virtio-pci transport, the 9p file system over virtio,
# and overlayfs for the writable tmpfs layer.
ROOT_MODULES="virtio_pci 9p 9pnet_virtio overlay"

die() { echo "lab-initramfs: $*" >&2; exit 2; }
[ -d "/lib/modules/$KVER" ] || die "no /lib/modules/$KVER (install linux-image-amd64: scripts/setup.sh)"
[ -x "$BUSYBOX" ] || die "no $BUSYBOX (install busybox-static: scripts/setup.sh)"
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || \
  { ldd "$BUSYBOX" >/dev/null 2>&1 && die "$BUSYBOX is dynamically linked; install busybox-static"; }
command -v cpio >/dev/null || die "no cpio (scripts/setup.sh)"
command -v modprobe >/dev/null || die "no modprobe (package kmod; scripts/setup.sh)"

# Ordered, de-duplicated list of module files (modprobe -D prints 'insmod FILE' or 'builtin NAME').
mods=()
while read -r verb path _; do
  [ "$verb" = insmod ] || continue
  dup=0
  for m in "${mods[@]}"; do [ "$m" = "$path" ] && dup=1 && break; done
  [ $dup = 1 ] || mods+=("$path")
done < <(for m in $ROOT_MODULES; do modprobe -S "$KVER" -D "$m" || die "modprobe -S $KVER -D $m failed"; done)

# Cache key: everything that goes into the image.
key=$( { echo "$KVER"; for m in "${mods[@]}"; do stat -c '%n %s %Y' "$m"; done
         stat -L -c '%s %Y' "$BUSYBOX"; cat "${BASH_SOURCE[0]}" "$HERE/kernel.sh"; } | sha256sum | cut -c1-16)
mkdir -p "$CACHE"
OUT="$CACHE/initrd-$KVER.gz"
exec 9>"$CACHE/.lock"
flock 9
if [ -s "$OUT" ] && [ "$(cat "$OUT.key" 2>/dev/null)" = "$key" ]; then
  echo "$OUT"; exit 0
fi

start=$(date +%s.%N)
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{bin,mods,proc,sys,dev,host,upper,newroot}
cp "$BUSYBOX" "$work/bin/busybox"
i=10
for m in "${mods[@]}"; do
  name=$(basename "$m"); name=${name%%.ko*}
  dst="$work/mods/$i-$name.ko"
  case "$m" in
    *.ko) cp "$m" "$dst" ;;
    *.ko.xz) xz -dc "$m" > "$dst" ;;
    *.ko.zst) zstd -qdc "$m" > "$dst" ;;
    *.ko.gz) gzip -dc "$m" > "$dst" ;;
    *) die "unexpected module file $m" ;;
  esac
  i=$((i + 1))
done
cat > "$work/init" <<'INIT'
#!/bin/busybox sh
# Lab initramfs: mount the host's root (9p, read-only) under a tmpfs overlay and hand over to the lab script.
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
S=$(sed -n 's/.*labscript=\([^ ]*\).*/\1/p' /proc/cmdline)
fail() { echo "lab-init: $*" > /dev/console; poweroff -f; sleep 5; exit 1; }
for m in /mods/*.ko; do insmod "$m" || fail "insmod $m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose host /host || fail "mount of the host root (9p) failed"
mount -t tmpfs tmp /upper; mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w /newroot || fail "overlay mount failed"
[ -n "$S" ] && [ -f "/newroot$S" ] || fail "lab script '$S' (labscript= on the kernel command line) not found"
mount --move /proc /newroot/proc; mount --move /sys /newroot/sys; mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash "$S"
INIT
chmod +x "$work/init"
(cd "$work" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$OUT.tmp"
mv -f "$OUT.tmp" "$OUT"
echo "$key" > "$OUT.key"
end=$(date +%s.%N)
echo "lab-initramfs: built $OUT (${#mods[@]} modules) in $(awk "BEGIN{printf \"%.1f\", $end-$start}") s" >&2
echo "$OUT"
