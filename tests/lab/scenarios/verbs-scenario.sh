#!/bin/bash
# The Java verbs conformance scenario (dev.nvmf.verbs.selftest.VerbsScenario, in verbs-ffm's main code: the
# product's `nvmf-target selftest` runs it too) on the guest's Soft-RoCE devices rxe0 (10.77.0.1) and rxe1
# (10.77.0.2), run with this build's classes (LAB_CLASSPATH). It prints "VERBS-SCENARIO: PASS" on success.
#
# Environment: VERBS_MAIN (main class; default above), VERBS_ARGS (arguments, split on spaces; default
# "ffm 10.77.0.1 10.77.0.2 4791 60000": the FFM provider, server and client addresses, the CM port, and a
# generous per-step bound in ms for emulation), VERBS_TIMEOUT (seconds for the whole program, default 300).
# Results: verbs_exit, verbs_pass, verbs_java_s.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
MAIN=${VERBS_MAIN:-dev.nvmf.verbs.selftest.VerbsScenario}
# shellcheck disable=SC2206
ARGS=(${VERBS_ARGS:-ffm $LAB_TARGET_ADDR $LAB_HOST_ADDR 4791 60000})

t0=$(cut -d' ' -f1 /proc/uptime)
run_java verbs-scenario "${VERBS_TIMEOUT:-300}" "$MAIN" "${ARGS[@]}"
rc=$?
lab_result verbs_java_s "$(lab_elapsed "$t0")"
lab_result verbs_exit "$rc"
# Resources the scenario may have leaked are visible after it exited (the kernel drops them with the process,
# but a listing taken now is part of the logs for diagnosis).
lab_collect_logs
if [ $rc -ne 0 ]; then
  lab_die "$MAIN exited with status $rc"
fi
grep -qx 'VERBS-SCENARIO: PASS' "$LAB_LOGS/verbs-scenario.log" || lab_die "no 'VERBS-SCENARIO: PASS' line"
lab_result verbs_pass 1
