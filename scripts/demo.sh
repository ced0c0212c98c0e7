#!/usr/bin/env bash
# The main job, end to end, in the VM lab (a QEMU guest with Soft-RoCE; see tests/lab/README.md).
#
#   scripts/demo.sh
#
# Builds the project, boots the lab VM and runs the Java verbs scenario (dev.nvmf.tests.verbs.VerbsScenario)
# on real rdma_rxe devices with this build's classes, then prints the result. (When the target daemon exists,
# this will start it in the lab and connect the Linux NVMe-oF initiator to it.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
# shellcheck source=env.sh
. scripts/env.sh
BUILD_DIR=${NVMF_BUILD_DIR:-target}
export NVMF_BUILD_DIR=$BUILD_DIR

echo "demo: building (mvn test-compile) ..."
CP=$(bash tests/lab/classpath.sh) || { echo "demo: build failed" >&2; exit 1; }
if [ ! -f "$ROOT/tests/$BUILD_DIR/classes/dev/nvmf/tests/verbs/VerbsScenario.class" ]; then
  echo "demo: dev.nvmf.tests.verbs.VerbsScenario is not built yet (tests/src/main/java/dev/nvmf/tests/verbs/)" >&2
  exit 1
fi

OUT="$ROOT/tests/lab/out/demo-$(date +%Y%m%d-%H%M%S)"
echo "demo: booting the lab VM (TCG emulation; about a minute) ..."
LAB_JAVA_HOME=$JAVA_HOME LAB_CLASSPATH=$CP bash tests/lab/lab.sh --out "$OUT" --timeout 540 verbs-scenario
rc=$?
echo
echo "---- verbs scenario output (guest, $OUT/logs/verbs-scenario.log)"
cat "$OUT/logs/verbs-scenario.log" 2>/dev/null
echo "---- results"
cat "$OUT/results.properties" 2>/dev/null
if [ $rc -eq 0 ]; then
  echo "demo: PASS: the verbs scenario ran on Soft-RoCE in the lab VM"
else
  echo "demo: FAIL (status $rc); console: $OUT/console.log, logs: $OUT/logs/" >&2
fi
exit $rc
