#!/usr/bin/env bash
# Installs what building, testing and the VM lab need on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are not reinstalled.
#
#   scripts/setup.sh           # install what is missing (root)
#   scripts/setup.sh --check   # only report: exit 1 if something is missing
#
# The JDK (22 or newer: java.lang.foreign) is not in Debian 12; scripts/env.sh finds one, e.g. Temurin 25 in
# /usr/lib/jvm/temurin-25-jdk-amd64, or JAVA_HOME / NVMF_JAVA_HOME.
set -euo pipefail
# Build: maven, a C toolchain for tests that need one. Lab (tests/lab): qemu + Debian's kernel and its modules
# (booted under TCG), busybox-static, cpio and kmod for the initramfs, rdma-core and the verbs/CM libraries,
# iproute2 (ip, rdma), nvme-cli and fio (the Linux NVMe-oF host side), perftest (link ceilings), linux-perf
# (perf-compare's PERF_PROFILE and PERF_TRACE), python3 (tests/lab/tcg-stats.py: the emulator's translation counters).
# Ceph RBD namespaces: librbd1 and librados2 at run time; the test cluster (scripts/ceph-test-cluster.sh) needs
# ceph-mon, ceph-osd and ceph-common (ceph, rados, rbd); the layout test compiles against librbd-dev/librados-dev.
PKGS="maven gcc libc6-dev qemu-system-x86 linux-image-amd64 busybox-static cpio kmod rdma-core ibverbs-providers
ibverbs-utils rdmacm-utils libibverbs-dev librdmacm-dev nvme-cli fio iproute2 perftest util-linux linux-perf python3
librbd1 librados2 ceph-mon ceph-osd ceph-common librbd-dev librados-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ "${1:-}" = --check ]; then
  [ -z "$missing" ] && exit 0
  echo "setup: missing packages:$missing" >&2
  exit 1
fi
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] || { echo "setup: missing packages:$missing; run scripts/setup.sh as root" >&2; exit 1; }
  echo "setup: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends $missing
fi
