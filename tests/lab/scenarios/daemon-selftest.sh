#!/bin/bash
# `nvmf-target selftest --device rxe0`, as an operator runs it first on a server with an RDMA NIC, on the guest's
# Soft-RoCE device rxe0 (10.77.0.1): the verbs scenario over rxe0's loopback (both CM ids on 10.77.0.1), then an
# NVMe connect and I/O against the daemon's in-process RAM namespace through the real transport. Checks the exit
# status and the report; then that an unknown device is a usage error that lists the devices; and that no QP or
# cm_id of ours is left behind.
#
# Environment: NVMF_BUILD_DIR (the Maven output folder bin/nvmf-target looks in; default target). When that build
# has no packaged jar with the selftest in it, the same main class runs from LAB_CLASSPATH.
# SELFTEST_STEP_TIMEOUT (seconds per wait, default 120: single-threaded emulation).
# Results: launcher, selftest_exit, selftest_pass, verbs_pass, nvme_pass, limits_reported, remote_invalidation,
# lacks_lines, unknown_device_exit, unknown_device_listed, leftover_qp, leftover_cm_id.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
STEP_TIMEOUT=${SELFTEST_STEP_TIMEOUT:-120}

# bin/nvmf-target when the build is packaged (no JVM start to find out), else the same main class.
lab_nvmf_command || lab_die "no java"
CMD=("${LAB_NVMF[@]}")

t0=$(cut -d' ' -f1 /proc/uptime)
run_step selftest 900 "${CMD[@]}" selftest --device rxe0 --step-timeout "$STEP_TIMEOUT"
rc=$?
lab_result selftest_java_s "$(lab_elapsed "$t0")"
lab_result selftest_exit "$rc"
OUT=$LAB_LOGS/selftest.log
[ "$rc" -eq 0 ] || lab_die "nvmf-target selftest --device rxe0 exited $rc"
grep -qx 'SELFTEST: PASS' "$OUT" || lab_die "no 'SELFTEST: PASS' line"
lab_result selftest_pass 1
grep -qx 'VERBS-SCENARIO: PASS' "$OUT" || lab_die "the verbs scenario did not pass completely on rxe0"
lab_result verbs_pass 1
grep -qx 'NVME-LOOPBACK: PASS' "$OUT" || lab_die "the NVMe check did not pass"
lab_result nvme_pass 1
grep -q '^SELFTEST: device rxe0, port 1 ACTIVE Ethernet, address 10.77.0.1,' "$OUT" || lab_die "not run on rxe0 at 10.77.0.1"
grep -q '^SELFTEST: limit RDMA READ depth: max_qp_rd_atom (IRD, as responder) [1-9]' "$OUT" || lab_die "no IRD/ORD line"
grep -q '^SELFTEST: limit rxe0: max_qp [0-9]*, max_qp_wr [0-9]*, max_sge [1-9]' "$OUT" || lab_die "no limits line"
grep -q '^SELFTEST: limit max inline data: ' "$OUT" || lab_die "no inline data line"
lab_result limits_reported 1
# rxe has type-2 windows and memory-management extensions: the host's key is invalidated by the target.
grep -q '^STEP nvme-read: ok (.*response by SEND_WITH_INV of the host.s window key)' "$OUT" \
  || lab_die "the NVMe read's response was not a SEND_WITH_INV of the window key"
lab_result remote_invalidation 1
lab_result lacks_lines "$(grep -c '^SELFTEST: lacks' "$OUT")"

run_step selftest-unknown 300 "${CMD[@]}" selftest --device nosuch0
lab_result unknown_device_exit "$?"
grep -q '^SELFTEST: FAIL devices: no device named nosuch0; devices: \[.*rxe0' "$LAB_LOGS/selftest-unknown.log" \
  && lab_result unknown_device_listed 1

{ for r in qp cm_id; do echo "# $r"; rdma resource show $r; done; } > "$LAB_LOGS/rdma-after.txt" 2>&1
lab_result leftover_qp "$(rdma resource show qp | grep -c java)"
lab_result leftover_cm_id "$(rdma resource show cm_id | grep -c java)"
