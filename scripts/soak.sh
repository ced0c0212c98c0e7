#!/usr/bin/env bash
# The soak: MINUTES (default 30) of mixed fio verify from two Linux hosts at once against the daemon in the lab VM,
# with an `nvme reset` of one host every 2 minutes and a disconnect/connect of the other every 3 minutes, and the
# daemon's resources sampled every minute (tests/lab/scenarios/soak.sh). Not part of CI.
#
#   scripts/soak.sh [MINUTES]
#
# Builds the daemon's package first (mvn package -DskipTests; NVMF_SOAK_BUILD=0 skips it), then waits for the lab
# lock (/tmp/nvmf-lab.lock: one lab VM on the machine at a time) and boots the VM. Prints the table (time, QPs, CQs,
# MRs, cm_ids, open queues, controllers, RSS, NMT, rounds, resets, reconnects, fio errors) and the verdict; the whole
# run is kept in tests/lab/out/soak-TIMESTAMP/ (soak-table.md, results.properties, logs/).
# Exit status: 0 when fio saw no error and every round, reset and reconnect held; the scenario's status otherwise.
# Environment: NVMF_BUILD_DIR (Maven output folder, default target), SOAK_SAMPLE_S, SOAK_RESET_S,
# SOAK_RECONNECT_S, SOAK_NMT_EVERY (see the scenario).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MIN=${1:-30}
[[ $MIN =~ ^[0-9]+$ ]] && [ "$MIN" -ge 1 ] || { echo "usage: scripts/soak.sh [MINUTES]" >&2; exit 2; }
# shellcheck source=env.sh
. scripts/env.sh
B=${NVMF_BUILD_DIR:-target}
if [ "${NVMF_SOAK_BUILD:-1}" != 0 ]; then
  mvn -B -q -DbuildDir="$B" -pl target-daemon -am package -DskipTests || { echo "soak: build failed" >&2; exit 1; }
fi
OUT=tests/lab/out/soak-$(date +%Y%m%d-%H%M%S)
ENVS=(--env "SOAK_MINUTES=$MIN" --env "NVMF_BUILD_DIR=$B")
for v in SOAK_SAMPLE_S SOAK_RESET_S SOAK_RECONNECT_S SOAK_NMT_EVERY; do
  [ -n "${!v:-}" ] && ENVS+=(--env "$v=${!v}")
done
echo "soak: $MIN minutes; waiting for the lab lock, results in $OUT (load $(cut -d' ' -f1-3 /proc/loadavg))"
# The VM's bound: the soak, plus boot, the daemon's start and the last rounds.
flock /tmp/nvmf-lab.lock tests/lab/lab.sh --timeout $((MIN * 60 + 900)) --out "$OUT" "${ENVS[@]}" soak
rc=$?
echo
cat "$OUT/soak-table.md" 2>/dev/null
grep -E '^soak_' "$OUT/results.properties" 2>/dev/null
echo "soak: exit $rc (load at the end $(cut -d' ' -f1-3 /proc/loadavg)); results in $OUT"
exit "$rc"
