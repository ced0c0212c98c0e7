#!/bin/bash
# Self-test of the lab harness (LabHarnessLabTest): results, logs, wait_for bounds, background programs and
# the scenario's exit status all come back to the host. Exits with $SELFTEST_EXIT (default 0).
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u

echo "selftest stdout marker: ${SELFTEST_MARKER:-none}"
echo "selftest stderr marker" >&2

# The RDMA devices from the common setup are there and ACTIVE.
rdma link show | grep -q 'rxe0/1 state ACTIVE' || lab_die "rxe0 not ACTIVE"
rdma link show | grep -q 'rxe1/1 state ACTIVE' || lab_die "rxe1 not ACTIVE"
lab_result rxe_devices "$(ls /sys/class/infiniband | tr '\n' ' ' | sed 's/ $//')"

# wait_for: true at once, and a false condition gives up after its bound.
wait_for "true" 5 "a true condition" || lab_die "wait_for true failed"
t0=$(cut -d' ' -f1 /proc/uptime)
if wait_for "false" 2 "a false condition"; then lab_die "wait_for false succeeded"; fi
lab_result wait_for_false_s "$(lab_elapsed "$t0")"

# A background program: ready line, alive, stopped.
start_bg ticker bash -c 'echo ready; while :; do sleep 0.5; done'
wait_for_log ticker '^ready$' 30 || lab_die "ticker not ready"
bg_alive ticker || lab_die "ticker not alive"
stop_bg ticker 10
bg_alive ticker && lab_die "ticker still alive"
lab_result bg_ok 1

# A step that hangs is cut by its own timeout (status 124).
run_step hang 2 sleep 60
lab_result hang_rc $?

# The host's count of the emulator's CPU (lab.sh's sampler): there at the start, and grown by the Java run below.
lab_host_cpu || lab_die "no emulator CPU time in $LAB_OUT/host-cpu"
lab_result host_cpu_us_before "$H"
# The emulator's translation counters (lab.sh's tcg-stats.py, on request): there, and the JVM below is new code.
lab_tcg_stats || lab_die "no translation counters in $LAB_OUT/tcg-stats"
lab_result tcg_tb_count_before "${TCG[tb_count]}"
lab_result tcg_code_bytes_before "${TCG[code_bytes]}"

# The JDK and this build's classes run in the guest from the host's paths (LAB_JAVA_HOME, LAB_CLASSPATH);
# the program's output and exit status come back.
run_java probe 120 dev.nvmf.tests.lab.LabGuestProbe hello 5
lab_result probe_rc $?
lab_host_cpu; lab_result host_cpu_us_after "$H"
lab_tcg_stats || lab_die "no second answer in $LAB_OUT/tcg-stats"
lab_result tcg_tb_count_after "${TCG[tb_count]}"
lab_result tcg_tb_flush_after "${TCG[tb_flush]}"
lab_result tcg_code_bytes_after "${TCG[code_bytes]}"
lab_result tcg_requests "$LAB_TCG_SEQ"
exit "${SELFTEST_EXIT:-0}"
