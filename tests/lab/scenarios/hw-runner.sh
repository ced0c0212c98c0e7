#!/bin/bash
# tests/lab/hw.sh, the runner for a machine with a real RDMA NIC (scripts/bench.sh hw), run in the guest with the
# guest's rxe devices in the NIC's place, as an operator runs it there:
#   1. `hw.sh check` picks the first RDMA device with an IPv4 address (rxe0, 10.77.0.1) and says so;
#   2. it refuses, with the reason, where the scenario would take over what is in use: a kernel target port,
#      a kernel target subsystem, a loaded null_blk;
#   3. perf-compare, with short jobs, runs through it (targets on rxe0, the host from rxe1) and passes;
#   4. afterwards nothing of the run is left: no kernel target port or subsystem, no null_blk, no controller, no
#      daemon, no QP or cm_id of a user process.
# Environment: NVMF_BUILD_DIR (as perf-compare). Results: check_rc, check_line, refuse_port_rc, refuse_port_msg,
# refuse_subsys_rc, refuse_subsys_msg, refuse_nullblk_rc, refuse_nullblk_msg, run_rc, left_ports, left_subsystems,
# left_nullblk, left_ctrls, left_daemon, left_qp, left_cm_id; the run's own results in hw/results.properties.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
HW=$LAB_REPO/tests/lab/hw.sh

run_step hw-check 120 "$HW" check > /dev/null
lab_result check_rc $?
lab_result check_line "$(grep -m1 '^hw: ok' "$LAB_LOGS/hw-check.log")"

# refuse NAME: `hw.sh check` while something is in use; its status and the reason it gave.
refuse() {
  run_step "hw-refuse-$1" 120 "$HW" check > /dev/null
  lab_result "refuse_$1_rc" $?
  lab_result "refuse_$1_msg" "$(grep -m1 '^hw: cannot run here' "$LAB_LOGS/hw-refuse-$1.log")"
}
mkdir -p "$NVMET/subsystems/nqn.2024-01.dev.nvmf:hw-busy" || lab_die "nvmet subsystem"
refuse subsys
ktarget_port 7 "$LAB_TARGET_ADDR" 4430 || lab_die "nvmet port"
refuse port
ktarget_teardown
nullblk_create 1 || lab_die "null_blk"
refuse nullblk
wait_for "rmmod null_blk" 30 "null_blk unloaded" || lab_die "cannot unload null_blk"

run_step hw-perf-compare 1500 "$HW" --host-addr "$LAB_HOST_ADDR" --out "$LAB_OUT/hw" --timeout 1400 \
  --env PERF_RUNTIME=2 --env PERF_WARMUP=2 --env PERF_DAEMON_WARMUP=8 perf-compare > /dev/null
lab_result run_rc $?
rdma_snapshot after-hw-run

lab_result left_ports "$(find "$NVMET/ports" -mindepth 1 -maxdepth 1 | wc -l)"
lab_result left_subsystems "$(find "$NVMET/subsystems" -mindepth 1 -maxdepth 1 | wc -l)"
lab_result left_nullblk "$([ -d /sys/module/null_blk ] && echo 1 || echo 0)"
n=0; for c in /sys/class/nvme/nvme*; do [ -e "$c" ] && n=$((n + 1)); done
lab_result left_ctrls "$n"
lab_result left_daemon "$(pgrep -fc 'dev.nvmf.target.cli.Main|nvmf-target serve' || true)"
lab_result left_qp "$(rdma_user_count qp)"
lab_result left_cm_id "$(rdma_user_count cm_id)"
