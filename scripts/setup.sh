#!/usr/bin/env bash
# Installs what building, testing and the VM lab need on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are not reinstalled.
set -euo pipefail
PKGS="maven gcc libc6-dev qemu-system-x86 linux-image-amd64 busybox-static cpio kmod rdma-core ibverbs-providers
ibverbs-utils rdmacm-utils libibverbs-dev librdmacm-dev nvme-cli fio iproute2 perftest"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends $missing
fi
