#!/usr/bin/env bash
# The main job, end to end, in the VM lab (a QEMU guest with Soft-RoCE; see tests/lab/README.md).
#
#   scripts/demo.sh
#
# Builds and packages the project, boots the lab VM and starts the target daemon in it exactly as the systemd
# unit does (bin/nvmf-target serve --config FILE, with a NOTIFY_SOCKET), then connects the Linux NVMe-oF
# initiator (nvme-rdma) to it and runs fio with crc32c verify; a SIGHUP adds a namespace the host sees, and a
# SIGTERM during fio stops the daemon in order (tests/lab/scenarios/daemon-serve.sh). Prints the results.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
# shellcheck source=env.sh
. scripts/env.sh
BUILD_DIR=${NVMF_BUILD_DIR:-target}
export NVMF_BUILD_DIR=$BUILD_DIR

echo "demo: building (mvn package, then the lab class path) ..."
mvn -B -q -DbuildDir="$BUILD_DIR" -pl target-daemon -am package -DskipTests >&2 \
  || { echo "demo: build failed" >&2; exit 1; }
CP=$(bash tests/lab/classpath.sh) || { echo "demo: build failed" >&2; exit 1; }

OUT="$ROOT/tests/lab/out/demo-$(date +%Y%m%d-%H%M%S)"
echo "demo: booting the lab VM (TCG emulation; a few minutes) ..."
LAB_JAVA_HOME=$JAVA_HOME LAB_CLASSPATH=$CP bash tests/lab/lab.sh --out "$OUT" --timeout 840 \
  --env NVMF_BUILD_DIR="$BUILD_DIR" daemon-serve
rc=$?
echo
echo "---- daemon log (guest, $OUT/logs/daemon.log)"
grep -v '^WARNING: .*sun.misc.Unsafe\|^WARNING: Please consider' "$OUT/logs/daemon.log" 2>/dev/null
echo "---- sd_notify messages the daemon sent"
cat "$OUT/logs/sd-notify.log" 2>/dev/null
echo "---- results"
cat "$OUT/results.properties" 2>/dev/null
if [ $rc -eq 0 ]; then
  echo "demo: PASS: nvmf-target served the Linux NVMe-oF initiator on Soft-RoCE in the lab VM"
else
  echo "demo: FAIL (status $rc); console: $OUT/console.log, logs: $OUT/logs/" >&2
fi
exit $rc
