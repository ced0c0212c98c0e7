#!/usr/bin/env bash
# Runs one lab scenario in a QEMU guest with a real RDMA stack (Soft-RoCE) and the Linux NVMe-oF drivers.
#
#   tests/lab/lab.sh [--out DIR] [--timeout SECONDS] [--env NAME=VALUE]... SCENARIO
#   tests/lab/lab.sh check        # exit 0 if the lab can run here, 77 with the reason if not
#
# SCENARIO is a script path or a name under tests/lab/scenarios/ (".sh" optional). The guest is Debian's own
# kernel (TCG emulation: no KVM needed), its root file system is the host's (read-only 9p + tmpfs overlay), so
# host-built classes and installed tools are used as they are. Results come back in DIR (default
# tests/lab/out/NAME-TIMESTAMP): status, scenario.out, scenario.err, results.properties, setup.log, logs/,
# console.log (the guest's serial console) and qemu.log. See tests/lab/README.md.
#
# Exit status: the scenario's own; 124 if the VM ran past SECONDS (default 600); 125 if the guest died
# before writing a status; 77 if the lab cannot run on this machine; 2 for bad usage.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=kernel.sh
. "$HERE/kernel.sh"
QEMU=${NVMF_LAB_QEMU:-qemu-system-x86_64}

usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
unavailable() { echo "lab: cannot run the VM lab here: $*" >&2; exit 77; }

lab_check() {
  command -v "$QEMU" >/dev/null || unavailable "no $QEMU (package qemu-system-x86; run scripts/setup.sh as root)"
  command -v timeout >/dev/null || unavailable "no timeout (coreutils)"
  KVER=$(lab_kernel_version) || unavailable "no Debian kernel with modules (package linux-image-amd64; scripts/setup.sh)"
  [ -r "/boot/vmlinuz-$KVER" ] || unavailable "/boot/vmlinuz-$KVER is not readable by $(id -un)"
  [ -x /bin/busybox ] || unavailable "no /bin/busybox (package busybox-static; scripts/setup.sh)"
  for t in cpio modprobe rdma nvme fio; do
    command -v "$t" >/dev/null || unavailable "no $t (scripts/setup.sh installs cpio kmod iproute2 nvme-cli fio)"
  done
  for m in rdma_rxe nvme_rdma nvmet_rdma null_blk veth; do
    modprobe -S "$KVER" -n -q "$m" 2>/dev/null || modinfo -k "$KVER" "$m" >/dev/null 2>&1 || \
      unavailable "kernel $KVER has no module $m"
  done
}

OUT="" TIMEOUT=600 ENVS=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --env) ENVS+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    check) lab_check; echo "lab: ok (kernel $KVER, $($QEMU --version | head -n1))"; exit 0 ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || usage
SCEN=$1
case $SCEN in
  */*) ;;
  *) SCEN=$HERE/scenarios/${SCEN%.sh}.sh ;;
esac
[ -f "$SCEN" ] || { echo "lab: no scenario $SCEN" >&2; exit 2; }
SCEN=$(cd "$(dirname "$SCEN")" && pwd)/$(basename "$SCEN")
NAME=$(basename "$SCEN" .sh)
[[ $TIMEOUT =~ ^[0-9]+$ ]] && [ "$TIMEOUT" -ge 60 ] || { echo "lab: --timeout must be >= 60 seconds" >&2; exit 2; }

lab_check
if [ -z "${LAB_JAVA_HOME:-}" ]; then
  # shellcheck source=../../scripts/env.sh
  LAB_JAVA_HOME=$( . "$REPO/scripts/env.sh" >/dev/null && echo "$JAVA_HOME") || LAB_JAVA_HOME=""
fi

[ -n "$OUT" ] || OUT=$HERE/out/$NAME-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT"/{status,scenario.out,scenario.err,results.properties,setup.log,console.log,qemu.log,logs}

t0=$(date +%s.%N)
INITRD=$("$HERE/initramfs.sh" "$KVER") || { echo "lab: initramfs build failed" >&2; exit 77; }
t1=$(date +%s.%N)

# The guest's scenario must finish (and report) before qemu's own bound: keep a margin for boot and
# log collection.
STIMEOUT=$((TIMEOUT - 60))
{
  echo "# written by tests/lab/lab.sh; sourced by the guest's boot.sh"
  printf 'export LAB_SCENARIO=%q LAB_REPO=%q LAB_SCENARIO_TIMEOUT=%q LAB_JAVA_HOME=%q LAB_CLASSPATH=%q LAB_TCG_THREAD=%q\n' \
    "$SCEN" "$REPO" "$STIMEOUT" "$LAB_JAVA_HOME" "${LAB_CLASSPATH:-}" "${LAB_TCG_THREAD:-single}"
  for kv in "${ENVS[@]}"; do
    k=${kv%%=*}
    [[ $k =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || { echo "lab: bad --env $kv" >&2; exit 2; }
    printf 'export %s=%q\n' "$k" "${kv#*=}"
  done
} > "$OUT/lab-env.sh" || exit 2

APPEND="console=ttyS0 panic=-1 labscript=$HERE/guest/boot.sh"
[ -n "${NVMF_LAB_VERBOSE:-}" ] || APPEND="quiet $APPEND"
# LAB_KERNEL_ARGS: more guest kernel parameters, for experiments (e.g. "tsc=reliable": the guest otherwise marks its
# TSC unstable under TCG and reads the HPET for every clock read, a system call and an emulated device read each).
[ -z "${LAB_KERNEL_ARGS:-}" ] || APPEND="$APPEND $LAB_KERNEL_ARGS"
echo "lab: $NAME: kernel $KVER, results in $OUT (timeout ${TIMEOUT}s)" >&2
# `timeout` puts itself and qemu in a process group of their own, so a signal to our group (mvn or a CI
# step being stopped) would not reach them: forward TERM/INT/HUP and take the VM down with us.
qpid=""
tpid=""
stop_vm() { [ -n "$qpid" ] && kill -TERM "$qpid" ${tpid:-} 2>/dev/null; [ -n "${MONDIR:-}" ] && rm -rf "$MONDIR"; echo "lab: $NAME: stopped by a signal" >&2; exit 143; }
trap stop_vm TERM INT HUP
# TCG threading: "single" (default) runs both vCPUs on one host thread. With "multi" (MTTCG), the JVMs in the
# guest crashed with SIGSEGV in JIT-compiled code and in class metadata (2 of 5 JVM starts on a quiet host, none
# on a loaded one, where the vCPU threads rarely ran at once): cross-vCPU modification of JIT code under MTTCG is
# the suspected cause (not proven). LAB_TCG_THREAD=multi brings the faster mode back.
# The monitor, on a socket of the host's only (not in the share): tcg-stats.py reads the emulator's translation
# counters (`info jit`) from it when the guest asks.
MONDIR=$(mktemp -d "${TMPDIR:-/tmp}/lab-monitor.XXXXXX") || exit 2
timeout -k 10 "$TIMEOUT" "$QEMU" -accel "tcg,thread=${LAB_TCG_THREAD:-single}" -cpu max -smp 2 -m 4096 \
  -display none -monitor "unix:$MONDIR/hmp,server=on,wait=off" -serial "file:$OUT/console.log" -no-reboot -net none \
  -kernel "/boot/vmlinuz-$KVER" -initrd "$INITRD" -append "$APPEND" \
  -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$OUT,mount_tag=out,security_model=none" \
  < /dev/null > "$OUT/qemu.log" 2>&1 &
qpid=$!
# The emulator's own CPU time, as the host counts it (utime+stime of the qemu process, all its threads, in µs),
# rewritten every 50 ms into the results share: OUT/host-cpu holds "qemu_cpu_us N N". A scenario reads it before and
# after a measured step (perf-compare: emulator CPU per I/O). Unlike the guest's /proc/stat it does not depend on
# the guest's tick accounting: under single-threaded TCG one host thread runs both vCPUs, and it sleeps only when
# both are idle (halted), so this is the work the guest made the emulator do. Stale by at most 50 ms. Rewritten in
# place with shell builtins only (no fork per sample) and never truncated: the same fixed-width line over the last,
# the value twice, so that a reader that caught a write halfway sees two different values and reads again.
host_cpu_sampler() {
  local hz s tick pid="" i; local -a f
  hz=$(getconf CLK_TCK) || return
  tick=$(mktemp -u "${TMPDIR:-/tmp}/lab-tick.XXXXXX") && mkfifo "$tick" && exec 9<>"$tick" && rm -f "$tick" || return
  # $1 is `timeout`; qemu is its child.
  for ((i = 0; i < 200 && ${#pid} == 0; i++)); do
    [ -r "/proc/$1/task/$1/children" ] || return
    read -r pid < "/proc/$1/task/$1/children"    # no newline at its end: read's status says nothing
    [ -n "$pid" ] || read -r -t 0.05 -u 9 s
  done
  pid=${pid%% *}
  [ -n "$pid" ] || return
  while read -r s < "/proc/$pid/stat" 2>/dev/null; do
    s=${s##*) }; read -r -a f <<< "$s"
    s=$(( (f[11] + f[12]) * 1000000 / hz ))
    printf 'qemu_cpu_us %020d %020d\n' "$s" "$s" 1<> "$OUT/host-cpu"
    read -r -t 0.05 -u 9 s
  done
}
: > "$OUT/host-cpu"    # no stale value from an earlier run in this folder before the first sample
host_cpu_sampler "$qpid" &
spid=$!
# The translation counters (tests/lab/tcg-stats.py: OUT/tcg-stats, answering OUT/tcg-request; lib.sh's
# lab_tcg_stats). Without python3 there is no OUT/tcg-stats, and a scenario records no counters.
rm -f "$OUT/tcg-stats" "$OUT/tcg-request"
if command -v python3 > /dev/null; then
  python3 "$HERE/tcg-stats.py" "$MONDIR/hmp" "$OUT" 2>> "$OUT/qemu.log" &
  tpid=$!
else
  echo "lab: $NAME: no python3: no translation counters (OUT/tcg-stats)" >&2
fi
wait "$qpid"
qrc=$?
qpid=""
kill "$spid" $tpid 2>/dev/null; wait "$spid" $tpid 2>/dev/null
rm -rf "$MONDIR"
trap - TERM INT HUP
t2=$(date +%s.%N)
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
{ echo "host_initramfs_s=$(secs "$t0" "$t1")"; echo "host_vm_wall_s=$(secs "$t1" "$t2")"; } >> "$OUT/results.properties"

if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
  echo "lab: $NAME: the VM did not finish within ${TIMEOUT}s (killed)" >&2
  rc=124
elif [ -s "$OUT/status" ]; then
  rc=$(cat "$OUT/status")
  echo "lab: $NAME: scenario exit status $rc (VM $(secs "$t1" "$t2") s wall)" >&2
else
  echo "lab: $NAME: the guest stopped without writing a status (qemu exit $qrc)" >&2
  rc=125
fi
if [ "$rc" != 0 ]; then
  echo "----- console.log (tail) -----" >&2; tail -n 40 "$OUT/console.log" >&2 2>/dev/null
  echo "----- qemu.log -----" >&2; cat "$OUT/qemu.log" >&2 2>/dev/null
  echo "----- scenario.err (tail) -----" >&2; tail -n 40 "$OUT/scenario.err" >&2 2>/dev/null
fi
exit "$rc"
