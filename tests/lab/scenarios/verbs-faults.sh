#!/bin/bash
# The verbs fault scenario (dev.nvmf.tests.verbs.VerbsFaultScenario, tests/src/main/java) with the FFM provider on
# the guest's Soft-RoCE devices: post/poll through an epoll waiter, bad_wr on send and receive chains longer than
# their queues, an error completion with vendor_err and the flushes on both sides, posts after the error
# transition, and rxe0 removed under a live connection (`rdma link delete`), brought back (`rdma link add`) and
# listened on again, then a port event (a GID change from `ip addr add` on va). It prints "VERBS-FAULTS: PASS" on
# success and one "FACT key=value" line per provider behaviour it observed; each fact becomes a result
# "fault_KEY".
#
# Environment: FAULTS_ARGS (default "ffm 10.77.0.1 10.77.0.2 4792 60000 --quiet 3000 --hot-remove
# rxe0:va:10.77.0.99/24"), FAULTS_TIMEOUT (seconds for the program, default 420).
# Results: faults_exit, faults_pass, faults_java_s, fault_* (the facts), rxe_links_after (rdma link count at the end).
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
# shellcheck disable=SC2206
ARGS=(${FAULTS_ARGS:-ffm $LAB_TARGET_ADDR $LAB_HOST_ADDR 4792 60000 --quiet 3000 --hot-remove rxe0:va:10.77.0.99/24})

t0=$(cut -d' ' -f1 /proc/uptime)
run_java verbs-faults "${FAULTS_TIMEOUT:-420}" dev.nvmf.tests.verbs.VerbsFaultScenario "${ARGS[@]}"
rc=$?
lab_result faults_java_s "$(lab_elapsed "$t0")"
lab_result faults_exit "$rc"
grep '^FACT ' "$LAB_LOGS/verbs-faults.log" | while read -r _ kv; do
  lab_result "fault_${kv%%=*}" "${kv#*=}"
done
# rxe0 must be back whatever happened: later diagnosis (state.txt) shows the links as the scenario left them.
lab_result rxe_links_after "$(rdma link show | grep -c '^link rxe')"
lab_collect_logs
[ $rc -eq 0 ] || lab_die "VerbsFaultScenario exited with status $rc"
grep -qx 'VERBS-FAULTS: PASS' "$LAB_LOGS/verbs-faults.log" || lab_die "no 'VERBS-FAULTS: PASS' line"
lab_result faults_pass 1
