#!/bin/bash
# PID 1 of the lab guest, after the initramfs switched to the host's root (read-only 9p + tmpfs overlay).
# Sets up the common RDMA lab (Soft-RoCE over a veth pair), runs one scenario script with a timeout, writes
# its exit status, stdout and stderr to the results share, collects logs, and powers the guest off.
#
# Results share (host folder chosen by tests/lab/lab.sh) is mounted at /run/lab/out and holds:
#   lab-env.sh            written by the host: LAB_SCENARIO, LAB_REPO, LAB_SCENARIO_TIMEOUT, user variables
#   setup.log             this script's own output (module loads, links)
#   scenario.out/.err     the scenario's stdout and stderr
#   results.properties    key=value lines (lab_result), plus guest timings
#   logs/                 collected logs (dmesg, rdma resources, background Java programs)
#   status                the scenario's exit status (written last; its absence means the guest died early)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
BOOT_UPTIME=$(cut -d' ' -f1 /proc/uptime)

halt_guest() {
  sync
  /bin/busybox poweroff -f
  echo o > /proc/sysrq-trigger
  sleep 10
  exit 1   # PID 1 exiting panics; panic=-1 + qemu -no-reboot ends the VM
}
trap halt_guest EXIT

say() { echo "lab-guest: $*" > /dev/console; }

mount -t tmpfs -o mode=755 run /run    # NOT /tmp: a tmpfs there would hide the host's /tmp
mkdir -p /run/lab/out /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs shm /dev/shm
# devtmpfs has no /dev/fd links; bash process substitution and many tools need them.
ln -sfn /proc/self/fd /dev/fd; ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout; ln -sfn /proc/self/fd/2 /dev/stderr
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /run/lab/out; then
  say "FATAL: cannot mount the results share (9p tag 'out')"
  exit 1
fi
export LAB_OUT=/run/lab/out LAB_LOGS=/run/lab/out/logs LAB_RUN=/run/lab
mkdir -p "$LAB_LOGS"
# A JVM that crashes in the guest leaves its hs_err report with the results (the default, its working directory,
# is in the guest's tmpfs overlay and would be lost); LabRun.jvmCrashed() looks for these files.
export JAVA_TOOL_OPTIONS="-XX:ErrorFile=$LAB_LOGS/hs_err_pid%p.log"
if [ ! -f "$LAB_OUT/lab-env.sh" ]; then
  say "FATAL: no lab-env.sh in the results share"
  echo 126 > "$LAB_OUT/status"
  exit 1
fi
# shellcheck disable=SC1091
. "$LAB_OUT/lab-env.sh"
# Guest JVMs start with C1 only, one compiler thread and the serial collector unless a scenario measures the JIT
# (perf-compare, aot-warmup and jit-control put the JDK's defaults back): under single-threaded TCG the C2 compiler
# and G1's threads share one emulated CPU with the program, and a daemon's start to "ready:" took 110-127 s with the
# defaults against 57-61 s with C1 and the serial collector (2026-12-01), and one C1 thread instead of the default
# two took its CPU to "ready:" from 73-74 s to 55-61 s (2026-12-02; both loaded host; tests/lab/README.md).
# LAB_GUEST_JVM=default keeps the defaults for every JVM of a run.
LAB_JVM_ERRORFILE="$JAVA_TOOL_OPTIONS"
if [ "${LAB_GUEST_JVM:-quick}" = quick ]; then
  export JAVA_TOOL_OPTIONS="$JAVA_TOOL_OPTIONS -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"
fi
export LAB_JVM_ERRORFILE
# shellcheck source=lib.sh
. "$LAB_REPO/tests/lab/guest/lib.sh"
lab_result guest_boot_s "$BOOT_UPTIME"

{
  echo "guest kernel $(uname -r), $(nproc) cpus, booted in ${BOOT_UPTIME}s (guest clock)"
  lab_common_setup
} > "$LAB_OUT/setup.log" 2>&1
setup_rc=$?
lab_result setup_s "$(lab_elapsed "$BOOT_UPTIME")"
if [ $setup_rc -ne 0 ]; then
  say "common setup FAILED (rc=$setup_rc):"
  cat "$LAB_OUT/setup.log" > /dev/console
  lab_collect_logs > /dev/null 2>&1
  echo 125 > "$LAB_OUT/status"
  exit 1
fi

say "running $(basename "$LAB_SCENARIO") (timeout ${LAB_SCENARIO_TIMEOUT}s)"
t0=$(cut -d' ' -f1 /proc/uptime)
cd "$LAB_REPO" || exit 1
timeout -k 10 "$LAB_SCENARIO_TIMEOUT" /bin/bash "$LAB_SCENARIO" > "$LAB_OUT/scenario.out" 2> "$LAB_OUT/scenario.err" < /dev/null
rc=$?
lab_result scenario_s "$(lab_elapsed "$t0")"
[ $rc -eq 124 ] && echo "lab-guest: scenario timed out after ${LAB_SCENARIO_TIMEOUT}s" >> "$LAB_OUT/scenario.err"
say "scenario exit status $rc"
lab_stop_all_bg > /dev/null 2>&1
lab_collect_logs > /dev/null 2>&1
echo "$rc" > "$LAB_OUT/status"
exit 0
