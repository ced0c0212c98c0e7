#!/usr/bin/env bash
# Runs one lab scenario on THIS machine, without a VM, over its own RDMA device (a real NIC) instead of the lab
# guest's Soft-RoCE pair: the comparison the emulated lab cannot make (docs/performance.md, "On a real RDMA NIC").
#
#   sudo tests/lab/hw.sh [--device DEV] [--addr IP] [--host-addr IP] [--out DIR] [--timeout SECONDS]
#                        [--env NAME=VALUE]... SCENARIO
#   sudo tests/lab/hw.sh check [--device DEV] [--addr IP] [--host-addr IP]
#                        # exit 0 (and what would be used) if a scenario can run here, 77 with the reason if not
#
# DEV      an RDMA device (ibv_devices) with an ACTIVE port 1; default: the first whose network interface has an
#          IPv4 address.
# IP       the address the targets listen on: an IPv4 address of DEV's interface (default: its first).
# --host-addr  the address the Linux host connects from (nvme connect -w); default the same as IP, so the I/O loops
#          back through the NIC (RoCE loopback in the HCA; the host and both targets share the machine's CPUs). Two
#          ports cabled to each other give a real link: pass the other port's address.
# SCENARIO a name under tests/lab/scenarios/ (".sh" optional) or a path. Meant for perf-compare
#          (scripts/bench.sh hw); scenarios that build their own rxe links, drop packets on the lab's veth pair or
#          name rxe0/rxe1 run in the VM only.
#
# The scenario gets what the lab guest's boot.sh gives it (LAB_REPO, LAB_OUT, LAB_LOGS, LAB_RUN, LAB_JAVA_HOME,
# LAB_CLASSPATH, LAB_SCENARIO_TIMEOUT, --env variables), with LAB_HW=1, LAB_TARGET_ADDR, LAB_HOST_ADDR and
# LAB_TARGET_IBDEV / LAB_HOST_IBDEV (the devices that own those addresses). Results in DIR (default
# tests/lab/out/hw-NAME-TIMESTAMP): status, scenario.out, scenario.err, results.properties, environment.txt, logs/.
#
# This is somebody's machine, not a throw-away guest: it refuses to start (exit 77) where the scenario would take
# over what is already in use (a kernel target subsystem or port, a loaded null_blk, a listener on the ports the
# scenario uses), and afterwards removes what it made: its NVMe controllers, the kernel target's configuration,
# null_blk, the background programs.
#
# Exit status: the scenario's own; 124 if it ran past SECONDS (default 1800); 77 if it cannot run here; 2 for bad
# usage.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
unavailable() { echo "hw: cannot run here: $*" >&2; exit 77; }
# The ports the scenarios listen on: NVMe/RDMA (the kernel target, the daemon), the daemon's metrics, perftest.
NVME_PORTS="4420 4421"
TCP_PORTS="9464"
NQN_PREFIX=nqn.2024-01.dev.nvmf:
SYS_IB=${HW_SYSFS:-/sys}/class/infiniband
NVMET=/sys/kernel/config/nvmet

DEV="" ADDR="" HOST_ADDR="" OUT="" TIMEOUT=1800 ENVS=() CHECK=0
while [ $# -gt 0 ]; do
  case $1 in
    --device) DEV=$2; shift 2 ;;
    --addr) ADDR=$2; shift 2 ;;
    --host-addr) HOST_ADDR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --env) ENVS+=("$2"); shift 2 ;;
    check) CHECK=1; shift ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) break ;;
  esac
done
if [ $CHECK = 0 ]; then
  [ $# -eq 1 ] || usage
  SCEN=$1
  case $SCEN in */*) ;; *) SCEN=$HERE/scenarios/${SCEN%.sh}.sh ;; esac
  [ -f "$SCEN" ] || { echo "hw: no scenario $SCEN" >&2; exit 2; }
  SCEN=$(cd "$(dirname "$SCEN")" && pwd)/$(basename "$SCEN")
  NAME=$(basename "$SCEN" .sh)
  [[ $TIMEOUT =~ ^[0-9]+$ ]] && [ "$TIMEOUT" -ge 60 ] || { echo "hw: --timeout must be >= 60 seconds" >&2; exit 2; }
  for kv in "${ENVS[@]}"; do
    [[ ${kv%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [[ $kv == *=* ]] || { echo "hw: bad --env $kv" >&2; exit 2; }
  done
else
  [ $# -eq 0 ] || usage
fi

# --- what this machine has -------------------------------------------------------------------------------------

# ipv4_of NETDEV: its IPv4 addresses, one per line.
ipv4_of() { ip -4 -o addr show dev "$1" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4 }'; }
# netdev_of IBDEV: the network interface of port 1 (RoCE: the Ethernet interface; IPoIB: ibX), from the GID table.
netdev_of() {
  local n
  for n in "$SYS_IB/$1"/ports/1/gid_attrs/ndevs/*; do
    [ -r "$n" ] && read -r n < "$n" 2>/dev/null && [ -n "$n" ] && { echo "$n"; return 0; }
  done
  # Older kernels: the device's net/ folder (a PCI function's interfaces).
  for n in "$SYS_IB/$1"/device/net/*; do [ -e "$n" ] && { basename "$n"; return 0; }; done
  return 1
}
port_active() { grep -q ACTIVE "$SYS_IB/$1/ports/1/state" 2>/dev/null; }
# ibdev_of [ADDR]: the first RDMA device with an ACTIVE port 1 whose interface has ADDR, or any IPv4 address when
# ADDR is empty (several functions of one NIC can share an interface: bonding, a second port down).
ibdev_of() {
  local d n a
  for d in "$SYS_IB"/*; do
    [ -e "$d" ] && port_active "${d##*/}" || continue
    n=$(netdev_of "${d##*/}") || continue
    a=$(ipv4_of "$n")
    if [ -n "$1" ]; then grep -qx "$1" <<< "$a"; else [ -n "$a" ]; fi && { echo "${d##*/}"; return 0; }
  done
  return 1
}

[ "$(id -u)" = 0 ] || unavailable "not root: the scenario loads kernel modules, configures the kernel target and runs nvme connect (run it with sudo)"
command -v ip > /dev/null || unavailable "no ip (package iproute2)"
devs=$(ls "$SYS_IB" 2>/dev/null)
[ -n "$devs" ] || unavailable "no RDMA device: $SYS_IB is empty or missing (ibv_devices lists none; load the NIC's RDMA driver, e.g. mlx5_ib)"
if [ -z "$DEV" ]; then
  if [ -n "$ADDR" ]; then
    DEV=$(ibdev_of "$ADDR") || unavailable "no RDMA device with an ACTIVE port has an interface with address $ADDR"
  else
    DEV=$(ibdev_of "") || unavailable "no RDMA device with an ACTIVE port 1 whose interface has an IPv4 address (devices: $(echo $devs)); give one an address, or name it with --device and --addr"
  fi
fi
[ -d "$SYS_IB/$DEV" ] || unavailable "no RDMA device $DEV (devices: $(echo $devs))"
port_active "$DEV" || unavailable "port 1 of $DEV is not ACTIVE ($(cat "$SYS_IB/$DEV/ports/1/state" 2>/dev/null || echo no state)): cable and link first"
NETDEV=$(netdev_of "$DEV") || unavailable "$DEV has no network interface (no GID with an interface on port 1)"
if [ -z "$ADDR" ]; then
  ADDR=$(ipv4_of "$NETDEV" | head -n1)
  [ -n "$ADDR" ] || unavailable "$NETDEV (the interface of $DEV) has no IPv4 address"
else
  grep -qx "$ADDR" <<< "$(ipv4_of "$NETDEV")" || unavailable "$ADDR is not an address of $NETDEV (the interface of $DEV): $(echo $(ipv4_of "$NETDEV"))"
fi
[ -n "$HOST_ADDR" ] || HOST_ADDR=$ADDR
if [ "$HOST_ADDR" = "$ADDR" ]; then
  HOST_DEV=$DEV
else
  HOST_DEV=$(ibdev_of "$HOST_ADDR") || unavailable "--host-addr $HOST_ADDR is not an address of an RDMA device's interface with an ACTIVE port"
fi
WHAT="device $DEV ($NETDEV), targets on $ADDR, host from $HOST_ADDR ($HOST_DEV)"
[ "$HOST_ADDR" = "$ADDR" ] && WHAT="$WHAT: loopback through the NIC"
echo "hw: $WHAT" >&2
for t in awk timeout setsid modprobe nvme fio rdma curl; do
  command -v "$t" > /dev/null || unavailable "no $t (packages iproute2 gawk coreutils util-linux kmod nvme-cli fio curl; scripts/setup.sh installs them)"
done

# Nothing of the scenario's may be in use already.
for m in configfs ib_uverbs rdma_ucm nvme_rdma nvmet nvmet_rdma; do
  modprobe "$m" 2>/dev/null || unavailable "cannot load the kernel module $m (modprobe $m)"
done
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || unavailable "cannot mount configfs"
[ -d "$NVMET" ] || unavailable "no $NVMET after loading nvmet"
[ -z "$(ls "$NVMET/ports" 2>/dev/null)" ] || unavailable "the kernel target already has ports ($(echo $(ls "$NVMET/ports"))): the scenario configures its own and removes every one afterwards; run it where the kernel target is not in use"
[ -z "$(ls "$NVMET/subsystems" 2>/dev/null)" ] || unavailable "the kernel target already has subsystems ($(echo $(ls "$NVMET/subsystems"))): run it where the kernel target is not in use"
[ ! -d /sys/module/null_blk ] || unavailable "null_blk is loaded: the scenario loads it with its own devices and unloads it afterwards (rmmod null_blk first)"
# (Captured first: with pipefail, grep -q leaving early could fail the pipeline and invert the test.)
cm_ids=$(timeout 10 rdma resource show cm_id 2>/dev/null)
for p in $NVME_PORTS; do
  ! grep -qE "LISTEN.*:$p( |$)" <<< "$cm_ids" || \
    unavailable "an RDMA listener already uses port $p (rdma resource show cm_id): another target runs here"
done
for p in $TCP_PORTS; do
  [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ] || unavailable "TCP port $p is in use (the daemon's metrics listen there): another nvmf-target runs here"
done
for c in /sys/class/nvme/nvme*; do
  [ -e "$c/subsysnqn" ] || continue
  [[ $(cat "$c/subsysnqn") == "$NQN_PREFIX"* ]] && unavailable "$(basename "$c") is connected to $(cat "$c/subsysnqn"), one of the lab's subsystems: nvme disconnect it first"
done
if [ -z "${LAB_JAVA_HOME:-}" ]; then
  # shellcheck source=../../scripts/env.sh
  LAB_JAVA_HOME=$( . "$REPO/scripts/env.sh" > /dev/null && echo "$JAVA_HOME") || LAB_JAVA_HOME=""
fi
[ -x "${LAB_JAVA_HOME:-}/bin/java" ] || unavailable "no JDK 25 (LAB_JAVA_HOME, or scripts/env.sh's)"

if [ $CHECK = 1 ]; then
  echo "hw: ok: $WHAT; kernel $(uname -r), $(nproc) CPUs"
  exit 0
fi

# --- the run ---------------------------------------------------------------------------------------------------

[ -n "$OUT" ] || OUT=$HERE/out/hw-$NAME-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT"/{status,scenario.out,scenario.err,results.properties,environment.txt,logs}
mkdir -p "$OUT/logs"
RUN=$(mktemp -d "${TMPDIR:-/tmp}/nvmf-hw.XXXXXX") || exit 2
export LAB_HW=1 LAB_REPO=$REPO LAB_OUT=$OUT LAB_LOGS=$OUT/logs LAB_RUN=$RUN LAB_JAVA_HOME LAB_CLASSPATH=${LAB_CLASSPATH:-}
export LAB_TARGET_ADDR=$ADDR LAB_HOST_ADDR=$HOST_ADDR LAB_TARGET_IBDEV=$DEV LAB_HOST_IBDEV=$HOST_DEV
export LAB_SCENARIO=$SCEN LAB_SCENARIO_TIMEOUT=$TIMEOUT
# A JVM that crashes leaves its report with the results (perf-compare passes this on to the daemon).
export LAB_JVM_ERRORFILE="-XX:ErrorFile=$OUT/logs/hs_err_pid%p.log"
for kv in "${ENVS[@]}"; do export "${kv%%=*}=${kv#*=}"; done
{
  echo "hw: $NAME on $(hostname), $(date -u +%FT%TZ)"
  echo "$WHAT"
  echo "kernel $(uname -r), $(nproc) CPUs, $(awk '/^model name/ { sub(/^[^:]*: /, ""); print; exit }' /proc/cpuinfo)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  fw=$(cat "$SYS_IB/$DEV/fw_ver" 2>/dev/null)
  echo "RDMA devices: $(echo $devs); $DEV: firmware ${fw:-none}, node type $(cat "$SYS_IB/$DEV/node_type" 2>/dev/null)"
  echo "java: $(JAVA_TOOL_OPTIONS= "$LAB_JAVA_HOME/bin/java" -version 2>&1 | grep -m1 version)"
  for kv in "${ENVS[@]}"; do echo "env $kv"; done
} > "$OUT/environment.txt"
cat "$OUT/environment.txt" >&2
echo "hw: $NAME: results in $OUT (timeout ${TIMEOUT}s)" >&2
{ echo "hw=1"; echo "hw_device=$DEV"; echo "hw_target_addr=$ADDR"; echo "hw_host_addr=$HOST_ADDR"
  echo "hw_load_before=$(cut -d' ' -f1 /proc/loadavg)"; } >> "$OUT/results.properties"

# What this run made goes again, whatever the scenario left: its background programs, its controllers (the
# lab's NQNs only: no other controller was connected to one, checked above), the kernel target's configuration
# (there was none before) and null_blk (not loaded before).
cleanup() {
  (
    # shellcheck source=guest/lib.sh
    . "$HERE/guest/lib.sh"
    lab_stop_all_bg > /dev/null 2>&1
    lab_collect_logs > /dev/null 2>&1
    for c in /sys/class/nvme/nvme*; do
      [ -e "$c/subsysnqn" ] || continue
      s=$(cat "$c/subsysnqn" 2>/dev/null)
      [[ $s == "$NQN_PREFIX"* ]] && nvme_disconnect "$s" > /dev/null 2>&1
    done
    ktarget_teardown > /dev/null 2>&1
    [ -d /sys/module/null_blk ] && { wait_for "rmmod null_blk" 30 "null_blk unloaded" > /dev/null 2>&1 || \
      echo "hw: null_blk could not be unloaded" >&2; }
  )
  rm -rf "$RUN"
}
spid=""
on_signal() { [ -n "$spid" ] && kill -TERM -- "-$spid" 2>/dev/null; cleanup; echo "hw: $NAME: stopped by a signal" >&2; exit 143; }
trap on_signal TERM INT HUP
t0=$(date +%s)
cd "$REPO" || exit 2
setsid timeout -k 10 "$TIMEOUT" /bin/bash "$SCEN" > "$OUT/scenario.out" 2> "$OUT/scenario.err" < /dev/null &
spid=$!
wait "$spid"
rc=$?
spid=""
[ $rc -eq 124 ] && echo "hw: scenario timed out after ${TIMEOUT}s" >> "$OUT/scenario.err"
cleanup
{ echo "scenario_s=$(( $(date +%s) - t0 ))"; echo "hw_load_after=$(cut -d' ' -f1 /proc/loadavg)"; } \
  >> "$OUT/results.properties"
echo "$rc" > "$OUT/status"
[ -f "$OUT/perf-table.md" ] && cat "$OUT/perf-table.md"
if [ $rc = 0 ]; then
  echo "hw: $NAME passed; results in $OUT" >&2
else
  echo "hw: $NAME FAILED (exit $rc); last lines of $OUT/scenario.err:" >&2
  tail -n 40 "$OUT/scenario.err" >&2
fi
exit $rc
