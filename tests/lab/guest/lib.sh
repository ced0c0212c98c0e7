# Guest-side library for lab scenarios. Sourced by boot.sh before a scenario runs, and by scenarios
# themselves (`. "$LAB_REPO/tests/lab/guest/lib.sh"`; sourcing twice is harmless).
#
# Environment (set by boot.sh from the host's lab-env.sh):
#   LAB_REPO        the repository root (the guest sees the host's file system at the same paths)
#   LAB_OUT         the writable results share; LAB_LOGS=$LAB_OUT/logs
#   LAB_JAVA_HOME   the JDK (>= 22) to run Java programs with
#   LAB_CLASSPATH   class path of the host-built classes and jars (host paths, valid in the guest)
#   LAB_SCENARIO_TIMEOUT  seconds the whole scenario may take (boot.sh enforces it)
# Addresses inside the guest: rxe0 on veth va = 10.77.0.1 (target side), rxe1 on vb = 10.77.0.2 (host side).
#
# Every step that can hang runs under `timeout`. Waiting is done with wait_for (a polled condition with a
# bound), never with a bare sleep.
[ -n "${LAB_LIB_LOADED:-}" ] && return 0
LAB_LIB_LOADED=1
# tests/lab/hw.sh, which runs a scenario on a machine with a real RDMA NIC, sets both to that NIC's addresses.
: "${LAB_TARGET_ADDR:=10.77.0.1}" "${LAB_HOST_ADDR:=10.77.0.2}"
LAB_RUN=${LAB_RUN:-/run/lab}
LAB_BG=$LAB_RUN/bg
: "${LAB_JAVA_HOME:=/usr/lib/jvm/temurin-25-jdk-amd64}"

# --- small utilities ---------------------------------------------------------------------------------------

# lab_log MESSAGE...: a line on stderr with the guest's uptime.
lab_log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*" >&2; }

# lab_die MESSAGE...: log and exit the scenario with status 1.
lab_die() { lab_log "FAIL: $*"; exit 1; }

# lab_result KEY VALUE: records a number or fact in results.properties (read by LabRun.results()).
lab_result() {
  echo "$1=$2" >> "$LAB_OUT/results.properties"
  lab_log "result $1=$2"
}

# lab_results KEY=VALUE...: several results at once, with one log line.
lab_results() {
  local IFS=' '
  [ $# -gt 0 ] || return 0
  printf '%s\n' "$@" >> "$LAB_OUT/results.properties"
  lab_log "results $*"
}

# lab_host_cpu: H = the emulator's CPU time in µs as the host counts it (tests/lab/lab.sh rewrites LAB_OUT/host-cpu,
# "qemu_cpu_us N N" with N fixed-width, every 50 ms), -1 if there is none; W = the guest's wall clock in µs at the
# same moment. The host overwrites the line in place: a read that caught a write halfway has two different values,
# and reads again. Builtins only (no fork: a fork costs a good part of a second under TCG).
lab_host_cpu() { local i k v v2; H=-1; W=${EPOCHREALTIME/./}
  [ -e "$LAB_OUT/host-cpu" ] || return 1    # no emulator: tests/lab/hw.sh on a real machine
  for ((i = 0; i < 50; i++)); do
    read -r k v v2 < "$LAB_OUT/host-cpu" 2>/dev/null
    [ "$k" = qemu_cpu_us ] && [ -n "$v" ] && [ "$v" = "$v2" ] && { H=$((10#$v)); return 0; }
  done
  lab_log "lab_host_cpu: no value in $LAB_OUT/host-cpu (last read: '$k $v $v2')"
  return 1
}
# lab_tcg_stats: TCG = the emulator's translation counters now (an associative array: tb_flush tb_invalidate
# tlb_full tlb_partial tlb_elided code_bytes tb_count; tests/lab/tcg-stats.py reads them from QEMU's `info jit`
# when asked through LAB_OUT/tcg-request and answers in LAB_OUT/tcg-stats, one line that starts and ends with the
# request's number). Returns 1 at once when the host runs no reader (no LAB_OUT/tcg-stats), 1 after 30 s without
# an answer. Builtins only; the wait between reads is a read timeout on a private FIFO, not a sleep process.
declare -gA TCG=()
LAB_TCG_SEQ=0
lab_tcg_stats() { local i n k v want; local -a f
  TCG=()
  [ -e "$LAB_OUT/tcg-stats" ] || return 1
  n=$((++LAB_TCG_SEQ))
  printf -v want '%020d' "$n"
  echo "$n" > "$LAB_OUT/tcg-request"
  if [ -z "${LAB_TCG_TICK:-}" ]; then
    LAB_TCG_TICK=$LAB_RUN/tcg-tick.$$
    [ -p "$LAB_TCG_TICK" ] || mkfifo "$LAB_TCG_TICK" || return 1
    exec 8<> "$LAB_TCG_TICK"
  fi
  for ((i = 0; i < 1500; i++)); do
    read -r -a f < "$LAB_OUT/tcg-stats" 2>/dev/null
    if [ "${#f[@]}" -ge 4 ] && [ "${f[0]}" = seq ] && [ "${f[1]}" = "$want" ] && [ "${f[-2]}" = end ] && \
       [ "${f[-1]}" = "$want" ]; then
      for ((k = 2; k + 3 < ${#f[@]}; k += 2)); do
        v=${f[k + 1]}; if [[ $v =~ ^[0-9]+$ ]]; then TCG[${f[k]}]=$((10#$v)); else TCG[${f[k]}]=-1; fi
      done
      return 0
    fi
    read -r -t 0.02 -u 8 v
  done
  lab_log "lab_tcg_stats: no answer to request $n in $LAB_OUT/tcg-stats (last read: '${f[*]:-}')"
  return 1
}
# lab_elapsed T0: seconds since T0 (a value read from /proc/uptime), one decimal.
lab_elapsed() { awk -v t0="$1" '{ printf "%.1f", $1 - t0 }' /proc/uptime; }

# wait_for CONDITION TIMEOUT_S [DESCRIPTION]: polls the shell CONDITION (eval'd) until it is true.
# Returns 0 as soon as it holds, 1 (with a message) if it still does not after TIMEOUT_S seconds.
wait_for() {
  local cond=$1 limit=$2 what=${3:-$1} t0
  t0=$(cut -d' ' -f1 /proc/uptime)
  while :; do
    if eval "$cond" > /dev/null 2>&1; then
      lab_log "ok after $(lab_elapsed "$t0")s: $what"
      return 0
    fi
    if awk -v t0="$t0" -v l="$limit" '{ exit !($1 - t0 >= l) }' /proc/uptime; then
      lab_log "TIMEOUT after ${limit}s waiting for: $what"
      return 1
    fi
    sleep 0.2
  done
}

# run_step NAME TIMEOUT_S COMMAND...: runs COMMAND under timeout; its output goes to $LAB_LOGS/NAME.log and
# to this scenario's stdout. Returns COMMAND's status (124 on timeout, with a message).
run_step() {
  local name=$1 limit=$2 rc t0
  shift 2
  t0=$(cut -d' ' -f1 /proc/uptime)
  lab_log "step $name: $*"
  timeout -k 5 "$limit" "$@" < /dev/null > "$LAB_LOGS/$name.log" 2>&1
  rc=$?
  cat "$LAB_LOGS/$name.log"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    lab_log "step $name TIMED OUT after ${limit}s"
  else
    lab_log "step $name exit $rc after $(lab_elapsed "$t0")s"
  fi
  return $rc
}

# --- Java programs -----------------------------------------------------------------------------------------

# lab_java_check: the JDK and class path are there; sets LAB_JAVA_ARGS, the options every lab Java program
# gets: no hsperfdata files, native access for FFM, the host-built class path, and $LAB_JAVA_OPTS (split on
# spaces) for extra options.
lab_java_check() {
  [ -x "$LAB_JAVA_HOME/bin/java" ] || { lab_log "no java at $LAB_JAVA_HOME/bin/java (LAB_JAVA_HOME)"; return 1; }
  [ -n "${LAB_CLASSPATH:-}" ] || { lab_log "LAB_CLASSPATH is empty (LabVm sets it; from the shell see tests/lab/README.md)"; return 1; }
  # shellcheck disable=SC2206
  LAB_JAVA_ARGS=(-XX:-UsePerfData --enable-native-access=ALL-UNNAMED -cp "$LAB_CLASSPATH" ${LAB_JAVA_OPTS:-})
}

# run_java NAME TIMEOUT_S [JVM-OPTIONS...] MAIN-CLASS [ARGS...]: runs a Java program in the foreground
# with a timeout. Output goes to $LAB_LOGS/NAME.log and stdout. Returns the program's status.
run_java() {
  local name=$1 limit=$2
  shift 2
  lab_java_check || return 1
  run_step "$name" "$limit" "$LAB_JAVA_HOME/bin/java" "${LAB_JAVA_ARGS[@]}" "$@"
}

# start_java_bg NAME [JVM-OPTIONS...] MAIN-CLASS [ARGS...]: starts a Java program in the background
# (e.g. the target daemon). Output goes to $LAB_LOGS/NAME.log; its pid is kept so that stop_bg, bg_alive
# and the end-of-run cleanup find it. Returns at once; use wait_for_log to wait until it is ready.
start_java_bg() {
  local name=$1
  shift
  lab_java_check || return 1
  start_bg "$name" "$LAB_JAVA_HOME/bin/java" "${LAB_JAVA_ARGS[@]}" "$@"
}

# start_bg NAME COMMAND...: like start_java_bg for any command.
start_bg() {
  local name=$1
  shift
  mkdir -p "$LAB_BG"
  lab_log "start $name: $*"
  setsid "$@" < /dev/null > "$LAB_LOGS/$name.log" 2>&1 &
  echo $! > "$LAB_BG/$name.pid"
}

# bg_pid NAME / bg_alive NAME: the pid of a background program, and whether it still runs.
bg_pid() { cat "$LAB_BG/$1.pid" 2>/dev/null; }
bg_alive() { local p; p=$(bg_pid "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# wait_for_log NAME REGEX TIMEOUT_S: waits until the background program's log has a line matching REGEX
# (grep -E). Fails early, with the log's tail, if the program exits first.
wait_for_log() {
  local name=$1 re=$2 limit=$3 log=$LAB_LOGS/$1.log
  wait_for "grep -Eq -- $(printf %q "$re") $(printf %q "$log") || ! bg_alive $name" "$limit" "$name log matches /$re/"
  grep -Eq -- "$re" "$log" && return 0
  bg_alive "$name" || lab_log "$name is not running any more"
  lab_log "last lines of $name.log:"; tail -n 30 "$log" >&2
  return 1
}

# stop_bg NAME [TIMEOUT_S]: SIGTERM, wait up to TIMEOUT_S (default 30) for exit, then SIGKILL.
# Returns the program's exit status when it can be known (it is our child), else 0.
stop_bg() {
  local name=$1 limit=${2:-30} p rc=0
  p=$(bg_pid "$name") || return 0
  [ -n "$p" ] || return 0
  if kill -0 "$p" 2>/dev/null; then
    lab_log "stop $name (pid $p)"
    kill -TERM "$p" 2>/dev/null
    if ! wait_for "! kill -0 $p" "$limit" "$name exits after SIGTERM"; then
      kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
    fi
  fi
  wait "$p" 2>/dev/null; rc=$?
  [ $rc -eq 127 ] && rc=0    # not our child: status unknown
  rm -f "$LAB_BG/$name.pid"
  return $rc
}

# lab_stop_all_bg: stops every background program still running (boot.sh calls it after the scenario).
lab_stop_all_bg() {
  local f
  for f in "$LAB_BG"/*.pid; do
    [ -e "$f" ] || continue
    stop_bg "$(basename "$f" .pid)" 10
  done
}

# lab_collect_logs: kernel log and RDMA/NVMe state into $LAB_LOGS (boot.sh calls it after every scenario;
# a scenario may call it earlier, e.g. before tearing things down).
lab_collect_logs() {
  mkdir -p "$LAB_LOGS"
  dmesg > "$LAB_LOGS/dmesg.txt" 2>&1
  { echo "# rdma link"; timeout 10 rdma link show
    for r in qp cq mr pd cm_id; do echo "# rdma resource show $r"; timeout 10 rdma resource show $r; done
    echo "# nvme list-subsys"; timeout 10 nvme list-subsys
    for c in /sys/class/nvme/nvme*; do
      [ -e "$c" ] || continue
      echo "# $c: state=$(cat "$c/state" 2>/dev/null) transport=$(cat "$c/transport" 2>/dev/null)" \
           "subsysnqn=$(cat "$c/subsysnqn" 2>/dev/null) address=$(cat "$c/address" 2>/dev/null)"
    done
  } > "$LAB_LOGS/state.txt" 2>&1
}

# --- common setup (boot.sh runs it before the scenario) ----------------------------------------------------

lab_common_setup() {
  set -e
  ip link set lo up
  modprobe -a configfs rdma_rxe ib_uverbs rdma_ucm nvme_rdma nvmet nvmet_rdma veth
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
  ip link add va type veth peer name vb
  # Both addresses are local to the guest: without accept_local, a packet rxe1 sends from 10.77.0.2 out of vb
  # arrives on va with a local source address and is dropped as a martian, so a client bound to 10.77.0.2
  # (rping -I, nvme connect -w) times out resolving the address (RDMA_CM_EVENT_ADDR_ERROR -110).
  for i in all default va vb; do
    sysctl -qw net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0
  done
  ip addr add $LAB_TARGET_ADDR/24 dev va
  ip addr add $LAB_HOST_ADDR/24 dev vb
  ip link set va up
  ip link set vb up
  # In-order delivery per flow, as a RoCE fabric gives it. Without RPS a veth hands each packet to the backlog of
  # the CPU that sent it, so two packets of one QP sent from different CPUs (a user QP's doorbell runs rxe's
  # requester on the poster's CPU, its completer kicks it from softirq on the other) can be received out of order:
  # rxe then NAKs (sequence error), the sender retransmits after its ACK timeout, and on the host's side Debian 12's
  # rxe re-runs fast-registration WRs on retransmission ("rxe_reg_fast_mr: mr->lkey = ... not free", the queue
  # then stalls until the host's 30 s I/O timeout). RPS to CPU 0 (mask 1, as measured; single-threaded TCG runs
  # both vCPUs on one host thread, so nothing is lost) puts every received packet on one backlog in the order it
  # was sent (README, "Host I/O stalls"). LAB_RPS=0 leaves it off, to reproduce.
  if [ "${LAB_RPS:-1}" != 0 ]; then
    local q
    for q in /sys/class/net/va/queues/rx-* /sys/class/net/vb/queues/rx-*; do echo 1 > "$q/rps_cpus"; done
    # One backlog now takes what two took, and a veth drops a packet when the receiving CPU's backlog holds
    # netdev_max_backlog (1000 by default; softnet_stat's second column counts them). rxe sees such a drop as a
    # failed transmit ("rdma_rxe: Failed sending ACK"); on 2026-12-02 a burst of discards and writes during
    # daemon-interop's file systems most likely lost ACKs that way, rxe's completer warned (rxe_comp.c) and the host's QP went
    # to error: error recovery and a reconnect. A fabric's switch buffers are the analogue; the lab gives the backlog
    # room instead. LAB_BACKLOG sets it (0: leave the kernel's default).
    if [ "${LAB_BACKLOG:-30000}" != 0 ]; then sysctl -qw net.core.netdev_max_backlog="${LAB_BACKLOG:-30000}"; fi
  fi
  rdma link add rxe0 type rxe netdev va
  rdma link add rxe1 type rxe netdev vb
  set +e
  wait_for "rdma link show rxe0/1 | grep -q 'state ACTIVE' && rdma link show rxe1/1 | grep -q 'state ACTIVE'" \
    30 "rxe0 and rxe1 ACTIVE" || return 1
  rdma link show
  ls /dev/infiniband
}

# softnet_drops: packets the CPUs' receive backlogs dropped since boot (/proc/net/softnet_stat, second column,
# hex, summed over CPUs): a veth's packets are lost only there.
softnet_drops() {
  local total=0 _a d _rest
  while read -r _a d _rest; do total=$((total + 16#$d)); done < /proc/net/softnet_stat
  echo "$total"
}

# rxe_counter NAME: one of rxe's counters (`rdma statistic`), summed over port 1 of rxe0 and rxe1 (0 where absent):
# completer_retry_err counts a requester's retransmissions after an ACK timeout, out_of_seq_request a responder's PSN
# gaps.
rxe_counter() {
  { rdma statistic show link rxe0/1; rdma statistic show link rxe1/1; } 2>/dev/null | tr ' ' '\n' |
    awk -v k="$1" 'p { s += $1; p = 0 } $0 == k { p = 1 } END { print s + 0 }'
}

# --- the daemon (bin/nvmf-target) and its media -----------------------------------------------------------

# lab_nvmf_command [JVM-OPTIONS]: sets the array LAB_NVMF to the command an operator runs, and LAB_NVMF_LAUNCHER to
# which it is (recorded as the result `launcher`): bin/nvmf-target when the build folder NVMF_BUILD_DIR (default
# target) holds a packaged jar with the daemon runtime in it that is not older than the compiled classes (a stale
# jar would run old code; a zip's directory holds the names uncompressed, so grep answers without a JVM start, which
# costs many seconds under TCG); else the same main class from LAB_CLASSPATH (a build compiled but not packaged).
# JVM-OPTIONS (one string, split on spaces) go to the JVM either way.
lab_nvmf_command() {
  local b=${NVMF_BUILD_DIR:-target} build jar opts=${1:-}
  build=$LAB_REPO/target-daemon/$b
  jar=$(ls "$build"/target-daemon-*.jar 2>/dev/null | head -n1)
  if [ -n "$jar" ] && [ -d "$build/lib" ] && grep -qa 'dev/nvmf/target/daemon/DaemonRuntime.class' "$jar" && \
     [ -z "$(find "$build/classes" -name '*.class' -newer "$jar" -print -quit 2>/dev/null)" ]; then
    LAB_NVMF_LAUNCHER=bin/nvmf-target
    LAB_NVMF=(env NVMF_BUILD_DIR="$b" NVMF_JAVA_HOME="$LAB_JAVA_HOME" NVMF_JAVA_OPTS="-XX:-UsePerfData${opts:+ $opts}"
      "$LAB_REPO/bin/nvmf-target")
  else
    LAB_NVMF_LAUNCHER=classpath
    lab_java_check || return 1
    # shellcheck disable=SC2206 # JVM-OPTIONS is a list of options
    LAB_NVMF=("$LAB_JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:-UsePerfData $opts
      -cp "$LAB_CLASSPATH" dev.nvmf.target.cli.Main)
  fi
  lab_result launcher "$LAB_NVMF_LAUNCHER"
}

# lab_metric ADDRESS REGEX: the sum of the Prometheus sample lines at http://ADDRESS/metrics matching REGEX (awk),
# as an integer (0 when none match).
lab_metric() {
  curl -s --max-time 20 "http://$1/metrics" | awk -v re="$2" '$0 ~ re && !/^#/ { s += $NF } END { printf "%d", s }'
}

# lab_scratch_fs DIR SIZE_MIB: an ext4 file system on a loop device (backed by the guest's tmpfs) mounted on DIR,
# for file namespaces that need what a disk's file system gives (O_DIRECT, hole punching), which tmpfs on Linux 6.1
# does not fully give (no O_DIRECT). Prints the loop device; lab_scratch_fs_remove DIR undoes it.
lab_scratch_fs() {
  local dir=$1 img loop
  img=$LAB_RUN/scratch-$(echo "$dir" | tr / _).img
  modprobe -a loop ext4 2>/dev/null
  mkdir -p "$dir" && truncate -s "${2}M" "$img" || return 1
  loop=$(losetup -f --show "$img") || return 1
  timeout 120 mkfs.ext4 -q -F -E nodiscard "$loop" > "$LAB_LOGS/mkfs-scratch-${dir##*/}.log" 2>&1 || return 1
  mount "$loop" "$dir" || return 1
  echo "$loop"
}
lab_scratch_fs_remove() {
  local loop
  loop=$(findmnt -n -o SOURCE "$1" 2>/dev/null)
  umount "$1" 2>/dev/null
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  return 0
}

# --- kernel NVMe-oF target (nvmet, configfs): the reference ------------------------------------------------

NVMET=/sys/kernel/config/nvmet

# nullblk_create [SIZE_GB]: loads null_blk with one memory-backed device (/dev/nullb0): data written can be
# read back, so fio verify works.
nullblk_create() {
  modprobe null_blk nr_devices=1 gb="${1:-1}" memory_backed=1 || return 1
  wait_for "[ -b /dev/nullb0 ]" 30 "/dev/nullb0"
}

# ktarget_subsys NQN DEVICE [NSID]: a subsystem open to any host, with DEVICE as namespace NSID (default 1).
ktarget_subsys() {
  local nqn=$1 dev=$2 ns=${3:-1}
  mkdir -p "$NVMET/subsystems/$nqn" || return 1
  echo 1 > "$NVMET/subsystems/$nqn/attr_allow_any_host" || return 1
  mkdir -p "$NVMET/subsystems/$nqn/namespaces/$ns" || return 1
  echo "$dev" > "$NVMET/subsystems/$nqn/namespaces/$ns/device_path" || return 1
  echo 1 > "$NVMET/subsystems/$nqn/namespaces/$ns/enable"
}

# ktarget_port PORTID ADDR SVCID NQN...: an RDMA port listening on ADDR:SVCID exposing the subsystems.
ktarget_port() {
  local id=$1 addr=$2 svc=$3 p
  shift 3
  p=$NVMET/ports/$id
  mkdir -p "$p" || return 1
  echo rdma > "$p/addr_trtype"; echo ipv4 > "$p/addr_adrfam"
  echo "$addr" > "$p/addr_traddr"; echo "$svc" > "$p/addr_trsvcid"
  for nqn in "$@"; do ln -s "$NVMET/subsystems/$nqn" "$p/subsystems/$nqn" || return 1; done
}

# ktarget_teardown: removes every port and subsystem (best effort).
ktarget_teardown() {
  local p s n
  for p in "$NVMET"/ports/*; do
    [ -d "$p" ] || continue
    for s in "$p"/subsystems/*; do [ -L "$s" ] && rm -f "$s"; done
    rmdir "$p"
  done
  for s in "$NVMET"/subsystems/*; do
    [ -d "$s" ] || continue
    for n in "$s"/namespaces/*; do [ -d "$n" ] && { echo 0 > "$n/enable"; rmdir "$n"; }; done
    rmdir "$s"
  done
}

# --- the Linux NVMe-oF host (initiator) --------------------------------------------------------------------

# nvme_connect_rdma NQN ADDR SVCID [nvme-connect options...]: connects with a 60 s bound. The host side
# uses rxe1 (host_traddr 10.77.0.2, so traffic crosses the veth pair) unless the options name another -w.
nvme_connect_rdma() {
  local nqn=$1 addr=$2 svc=$3 w=(-w "$LAB_HOST_ADDR")
  shift 3
  case " $* " in *" -w "*|*" --host-traddr"*) w=() ;; esac
  run_step "nvme-connect-$nqn" 60 nvme connect -t rdma -a "$addr" -s "$svc" -n "$nqn" "${w[@]}" "$@"
}

# nvme_ctrl_for NQN: prints the controller name (nvmeX) connected to subsystem NQN, if any.
nvme_ctrl_for() {
  local c
  for c in /sys/class/nvme/nvme*; do
    [ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$1" ] && { basename "$c"; return 0; }
  done
  return 1
}

# nvme_ns_dev NQN: prints the namespace block device (/dev/nvmeXnY) of subsystem NQN if its controller is
# live and the device node exists. Works with and without native multipath (the head's device link points
# to the nvme-subsystem, a plain namespace's to the controller; both have subsysnqn). Hidden per-path
# devices (nvmeXcYnZ) are skipped.
nvme_ns_dev() {
  local c b n
  c=$(nvme_ctrl_for "$1") || return 1
  [ "$(cat "/sys/class/nvme/$c/state" 2>/dev/null)" = live ] || return 1
  for b in /sys/block/nvme*; do
    n=${b##*/}
    case $n in *c[0-9]*n*) continue ;; esac
    [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] && [ -b "/dev/$n" ] && { echo "/dev/$n"; return 0; }
  done
  return 1
}

# nvme_ns_dev_for NQN [TIMEOUT_S]: waits (default 60 s) for nvme_ns_dev NQN and prints the device.
nvme_ns_dev_for() {
  wait_for "nvme_ns_dev $(printf %q "$1")" "${2:-60}" "a live namespace of $1" || return 1
  nvme_ns_dev "$1"
}

# nvme_disconnect NQN: disconnects (30 s bound) and waits for the controller to go away.
nvme_disconnect() {
  run_step "nvme-disconnect-$1" 30 nvme disconnect -n "$1" || return 1
  wait_for "! nvme_ctrl_for $1" 30 "controller for $1 removed"
}

# nvme_ns_dev_nsid NQN NSID: prints the block device of namespace NSID of subsystem NQN (as nvme_ns_dev: multipath
# head or plain namespace, hidden per-path devices skipped). nvme_ns_dev_nsid_for NQN NSID [TIMEOUT_S] waits for it.
nvme_ns_dev_nsid() {
  local b n
  for b in /sys/block/nvme*; do
    n=${b##*/}
    case $n in *c[0-9]*n*) continue ;; esac
    [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$1" ] && [ "$(cat "$b/nsid" 2>/dev/null)" = "$2" ] \
      && [ -b "/dev/$n" ] && { echo "/dev/$n"; return 0; }
  done
  return 1
}
nvme_ns_dev_nsid_for() {
  wait_for "nvme_ns_dev_nsid $(printf %q "$1") $2" "${3:-60}" "block device of NSID $2 of $1" || return 1
  nvme_ns_dev_nsid "$1" "$2"
}

# nvme_discovery_entries FILE: the entries of a discovery log as `nvme discover` printed it into FILE, one line
# each: SUBTYPE|PORTID|TRADDR|TRSVCID|SUBNQN|TRTYPE|ADRFAM|TREQ|EFLAGS|RDMA_QPTYPE|RDMA_CMS, SUBTYPE one of nvm,
# current (the current discovery subsystem), referral, or nvme-cli's own words; the others in nvme-cli's words.
nvme_discovery_entries() {
  awk '
    function flush() { if (n) printf "%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n", st, pi, ta, sv, sn, tt, af, tq, ef, qp, cm }
    { v = $0; sub(/^[^:]*: */, "", v); sub(/ +$/, "", v) }
    /^=+Discovery Log Entry/ { flush(); n = 1; st = pi = ta = sv = sn = tt = af = tq = ef = qp = cm = ""; next }
    /^subtype:/ { st = v; sub(/^nvme subsystem$/, "nvm", st); sub(/^current discovery subsystem$/, "current", st)
                  sub(/^discovery subsystem referral$/, "referral", st) }
    /^portid:/ { pi = v }
    /^traddr:/ { ta = v }
    /^trsvcid:/ { sv = v }
    /^subnqn:/ { sn = v }
    /^trtype:/ { tt = v }
    /^adrfam:/ { af = v }
    /^treq:/ { tq = v }
    /^eflags:/ { ef = v }
    /^rdma_qptype:/ { qp = v }
    /^rdma_cms:/ { cm = v }
    END { flush() }' "$1"
}

# nvme_id_results FILE PREFIX FIELD...: records the result PREFIX_FIELD for every FIELD, read from the "FIELD : VALUE"
# lines of nvme-cli's id-ctrl / id-ns output saved in FILE (one process for all of them, as lab_results): a number
# in decimal (nvme-cli prints some fields in hex, some in decimal), anything else as printed (subnqn); empty when
# FILE has no such line (nvme-cli leaves out fields a flag says are not reported, e.g. NPWG when NSFEAT bit 4 is 0).
nvme_id_results() {
  local file=$1 prefix=$2 lines
  shift 2
  lines=$(awk -v want="$*" -v prefix="$prefix" '
    function num(v,   i, n) {
      if (v ~ /^0x[0-9a-fA-F]+$/) {
        v = tolower(substr(v, 3)); n = 0
        for (i = 1; i <= length(v); i++) n = n * 16 + index("0123456789abcdef", substr(v, i, 1)) - 1
        return sprintf("%.0f", n)
      }
      return v ~ /^[0-9]+$/ ? sprintf("%.0f", v + 0) : v
    }
    BEGIN { n = split(want, w, " ") }
    $2 == ":" && !($1 in seen) { v = $0; sub(/^[^:]*: */, "", v); sub(/[ \t]+$/, "", v); seen[$1] = v }
    END { for (i = 1; i <= n; i++) printf "%s_%s=%s\n", prefix, w[i], (w[i] in seen) ? num(seen[w[i]]) : "" }
  ' "$file")
  local IFS=$'\n'
  # shellcheck disable=SC2086 # one result per line
  lab_results $lines
}

# nvme_feature NAME DEV FID [get-feature options...]: Get Features through nvme-cli (output in logs/NAME.log).
# Prints the value the controller returned (dword 0 of the completion) in decimal, or "status:0xSTATUS" (nvme-cli's
# status word: SC, SCT, More, DNR) when the controller refused it. Returns nvme-cli's exit status.
nvme_feature() {
  local name=$1 dev=$2 fid=$3 rc out
  shift 3
  timeout -k 5 30 nvme get-feature "$dev" -f "$fid" "$@" < /dev/null > "$LAB_LOGS/$name.log" 2>&1
  rc=$?
  out=$(< "$LAB_LOGS/$name.log")
  if [ $rc -eq 0 ] && [[ $out =~ value:(0x)?([0-9a-fA-F]+) ]]; then
    echo $((16#${BASH_REMATCH[2]}))
  elif [[ $out =~ status.*\((0x[0-9a-fA-F]+)\) ]]; then
    echo "status:${BASH_REMATCH[1]}"
  else
    echo "error:$rc"
  fi
  return $rc
}

# --- fio ---------------------------------------------------------------------------------------------------

# fio_run NAME TIMEOUT_S FIO-OPTIONS...: runs one fio job (--name=NAME added) with terse and normal output
# to $LAB_LOGS/NAME.log; sets FIO_ERROR, FIO_READ_IOPS and FIO_WRITE_IOPS from the terse line.
fio_run() {
  local name=$1 limit=$2 rc line
  shift 2
  run_step "$name" "$limit" fio --name="$name" --output-format=terse,normal "$@"
  rc=$?
  line=$(grep -m1 '^3;fio-' "$LAB_LOGS/$name.log")
  FIO_ERROR=$(echo "$line" | cut -d';' -f5)
  FIO_READ_IOPS=$(echo "$line" | cut -d';' -f8)
  FIO_WRITE_IOPS=$(echo "$line" | cut -d';' -f49)
  return $rc
}

# fio_clat_pct LOG PCT: V = percentile PCT (as fio prints it: 50.00, 99.00) of the completion latency in µs, from
# the "clat percentiles (UNIT):" block of fio's normal output in LOG (UNIT nsec, usec or msec; "-" if absent).
# With --lat_percentiles=1 fio's terse line carries the total latency's percentiles (submission + completion)
# instead, and only the normal output still has these. Builtins only.
fio_clat_pct() {
  local l u="" x; V=-
  while IFS= read -r l; do
    if [ -z "$u" ]; then
      [[ $l == *"clat percentiles ("*"):"* ]] && { u=${l##*clat percentiles (}; u=${u%%)*}; }
      continue
    fi
    [[ $l == *"|"*"th=["* ]] || return 0
    [[ $l == *" $2th=["* ]] || continue
    x=${l#*" $2th=["}; x=${x%%]*}; x=${x// /}
    case $u in
      nsec) V=$(( (x + 500) / 1000 )) ;;
      msec) V=$(( x * 1000 )) ;;
      *) V=$x ;;
    esac
    return 0
  done < "$1"
}

# --- the daemon under faults: metrics, resources, link faults, memory -------------------------------------------
# (used by daemon-faults.sh, daemon-lifecycle.sh and soak.sh)

# nvmf_metric REGEX [ADDRESS]: the sum of the samples of the daemon's Prometheus endpoint (ADDRESS, default
# $NVMF_METRICS or 127.0.0.1:9464) whose line matches REGEX (awk); 0 when none matches or the endpoint is down.
nvmf_metric() {
  curl -s --max-time 20 "http://${2:-${NVMF_METRICS:-127.0.0.1:9464}}/metrics" 2>/dev/null \
    | awk -v re="$1" '$0 ~ re && !/^#/ { s += $NF } END { printf "%d", s }'
}

# nvmf_io_bytes SUBNQN [OPCODE]: bytes the daemon moved for subsystem SUBNQN's namespaces (nvmf_io_bytes_total,
# every opcode, or only OPCODE: read, write...); monotonic while the daemon runs, for "I/O flows". Micrometer
# writes a sample's labels sorted by name (nsid, opcode, subsystem), which the pattern relies on.
nvmf_io_bytes() {
  nvmf_metric "^nvmf_io_bytes_total\\{${2:+.*opcode=\"$2\"}.*subsystem=\"$1\""
}

# rdma_user_count RESOURCE: lines of `rdma resource show RESOURCE` (qp, cq, mr, pd, cm_id) owned by a user-space
# process (a "pid N" field; the kernel's own, e.g. the host driver's, show "comm [nvme_rdma]" and no pid). In the
# fault scenarios the daemon is the only user-space RDMA program, so this is the daemon's count, whichever of its
# threads created the resource (the kernel records the creating thread, which may have ended).
rdma_user_count() { timeout 10 rdma resource show "$1" 2>/dev/null | grep -cE ' pid [0-9]+ '; }

# rdma_all_count RESOURCE: every line of `rdma resource show RESOURCE` (kernel and user) except rxe's own GSI QPs
# and, for CQs, the idle CQs of the kernel's shared CQ pool ("users 0 ... comm [ib_core]"): the Linux host driver
# takes its CQs from that per-device pool (ib_cq_pool_get), which keeps them until the device goes away. Seen in the
# lab: two such CQs on rxe1 (the host's device) after the host's first connect, the same two after 100 more cycles.
rdma_all_count() {
  timeout 10 rdma resource show "$1" 2>/dev/null | grep -v ' type GSI ' \
    | { if [ "$1" = cq ]; then grep -Ev ' users 0 .*comm \[ib_core\]'; else cat; fi; } | grep -c .
}

# rdma_counts: "qp=N cq=N mr=N pd=N cm_id=N" of user-space processes (rdma_user_count), on one line.
rdma_counts() {
  local r out=""
  for r in qp cq mr pd cm_id; do out="$out${out:+ }$r=$(rdma_user_count $r)"; done
  echo "$out"
}

# rdma_snapshot NAME: every `rdma resource show` table into logs/rdma-NAME.txt (for the diagnosis of a leak).
rdma_snapshot() {
  { for r in qp cq mr pd cm_id; do echo "# rdma resource show $r"; timeout 10 rdma resource show $r; done
  } > "$LAB_LOGS/rdma-$1.txt" 2>&1
}

# link_loss on|off: every packet on both veth ends is lost (netem loss 100% as the root qdisc of va and vb), or
# delivered again. (`ip link set down` would break rxe's addressing for the rest of the boot.)
link_loss() {
  local d
  modprobe sch_netem 2>/dev/null
  for d in va vb; do
    if [ "$1" = on ]; then
      tc qdisc replace dev "$d" root netem loss 100% || return 1
    else
      tc qdisc del dev "$d" root 2>/dev/null
    fi
  done
  lab_log "link loss $1 (va, vb)"
}

# path_drop ADDRESS on|off: drops every IP packet from ADDRESS leaving vb (the hosts' side) and to ADDRESS leaving
# va (the target's side): a host on that address stops talking, the others keep their path. RoCE v2 is UDP/IP, so
# a u32 match on the address catches every packet of its QPs and of its CM.
path_drop() {
  local d m
  modprobe -a sch_prio cls_u32 act_gact 2>/dev/null
  for d in vb va; do
    if [ "$2" = on ]; then
      if [ "$d" = vb ]; then m=src; else m=dst; fi
      tc qdisc replace dev "$d" root handle 1: prio || return 1
      tc filter add dev "$d" parent 1: protocol ip prio 1 u32 match ip "$m" "$1/32" action drop || return 1
    else
      tc qdisc del dev "$d" root 2>/dev/null
    fi
  done
  lab_log "path of $1 dropped: $2"
}

# lab_hold SECONDS WHAT: lets a fault last SECONDS of the guest clock (the fault's duration is the scenario's
# parameter; this is not a wait for a condition).
lab_hold() {
  local t0
  t0=$(cut -d' ' -f1 /proc/uptime)
  lab_log "holding for ${1}s: $2"
  while awk -v t0="$t0" -v l="$1" '{ exit !($1 - t0 < l) }' /proc/uptime; do sleep 0.2; done
}

# lab_add_host_addr ADDRESS: a second host address on vb (a second machine's own address: nvme-cli refuses a
# second connect to one target address from a source address that has one), and waits for rxe1's GID of it.
lab_add_host_addr() {
  local hex
  hex=$(echo "$1" | awk -F. '{ printf "%02x%02x:%02x%02x", $1, $2, $3, $4 }')
  ip addr add "$1/24" dev vb || return 1
  wait_for "grep -qi '${hex}' /sys/class/infiniband/rxe1/ports/1/gids/*" 30 "rxe1 GID for $1"
}

# nvme_ctrl_of SUBNQN HOSTNQN: the controller (nvmeX) of subsystem SUBNQN connected with that host NQN.
nvme_ctrl_of() {
  local c
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] && [ "$(cat "$c/hostnqn" 2>/dev/null)" = "$2" ] \
      && { basename "$c"; return 0; }
  done
  return 1
}

# nvme_ctrl_state CTRL: the host driver's state of nvmeX (live, resetting, connecting, deleting...), "gone".
nvme_ctrl_state() { cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone; }

# blk_writes DEV / blk_ios DEV: writes, and reads plus writes, completed on a block device (its /sys/block/X/stat,
# plus its paths' if it is a native-multipath head). For a local disk (the kernel target's null_blk). In the lab
# (6.1, native multipath) an NVMe-oF namespace's head and its /sys/block/X/multipath/* paths stayed at 0 while fio
# ran: for those use nvmf_io_bytes, the daemon's own count.
blk_stat_sum() {
  local d=${2#/dev/}
  cat "/sys/block/$d/stat" /sys/block/"$d"/multipath/*/stat 2>/dev/null | awk -v f="$1" '
    { s += (f == "w") ? $5 : $1 + $5 } END { printf "%d\n", s }'
}
blk_writes() { blk_stat_sum w "$1"; }
blk_ios() { blk_stat_sum rw "$1"; }

# fio_rounds_bg NAME FIO-OPTIONS...: fio in rounds, in the background, until fio_rounds_stop NAME: each round is
# one fio run of the options (write and verify: each round checks what it wrote), its result one line of
# logs/NAME.log ("round N rc R errors E"), its output logs/NAME-N.log. A round that fails does not stop the rounds.
fio_rounds_bg() {
  local name=$1
  shift
  touch "$LAB_RUN/$name.run"
  start_bg "$name" bash "$LAB_REPO/tests/lab/guest/fio-rounds.sh" "$LAB_RUN/$name.run" "$LAB_LOGS/$name" "$@"
}

# fio_rounds_stop NAME TIMEOUT_S: lets the round in progress finish, then sets ROUNDS (rounds run), ROUNDS_FAILED
# (rounds with a non-zero exit status or error count) and ROUNDS_ERRORS (the error counts summed). Returns 0 if at
# least one round ran and none failed.
fio_rounds_stop() {
  rm -f "$LAB_RUN/$1.run"
  wait_for "! bg_alive $1" "$2" "fio rounds $1 end" || lab_log "fio rounds $1 still running after $2 s: stopping them"
  stop_bg "$1" 10
  fio_rounds_count "$1"
  lab_log "fio rounds $1: $ROUNDS rounds, $ROUNDS_FAILED failed, $ROUNDS_ERRORS errors"
  [ "$ROUNDS" -ge 1 ] && [ "$ROUNDS_FAILED" = 0 ]
}

# fio_rounds_count NAME: sets ROUNDS, ROUNDS_FAILED, ROUNDS_ERRORS from the rounds finished so far.
fio_rounds_count() {
  read -r ROUNDS ROUNDS_FAILED ROUNDS_ERRORS < <(awk '/^round / { n++; e += $6; if ($4 != 0 || $6 != 0) f++ }
    END { printf "%d %d %d\n", n, f, e }' "$LAB_LOGS/$1.log" 2>/dev/null)
  : "${ROUNDS:=0}" "${ROUNDS_FAILED:=0}" "${ROUNDS_ERRORS:=0}"
}

# proc_rss_kb PID: resident set size of a process in KiB.
proc_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# jvm_nmt PID LABEL: Native Memory Tracking of a JVM started with -XX:NativeMemoryTracking=summary
# (`jcmd PID VM.native_memory summary`, no GC forced) into logs/nmt-LABEL.txt; prints one line of committed KiB per
# category, "total=N java_heap=N class=N thread=N code=N gc=N compiler=N internal=N other=N symbol=N ...".
jvm_nmt() {
  timeout 120 "$LAB_JAVA_HOME/bin/jcmd" "$1" VM.native_memory summary > "$LAB_LOGS/nmt-$2.txt" 2>&1 || return 1
  awk '
    /^Total: / { if (match($0, /committed=[0-9]+KB/)) printf "total=%s", substr($0, RSTART + 10, RLENGTH - 12) }
    /^-  *[A-Za-z].*\(reserved=/ {
      name = $0; sub(/^- */, "", name); sub(/ *\(reserved=.*/, "", name); gsub(/[^A-Za-z]+/, "_", name)
      if (match($0, /committed=[0-9]+KB/)) printf " %s=%s", tolower(name), substr($0, RSTART + 10, RLENGTH - 12)
    }
    END { print "" }' "$LAB_LOGS/nmt-$2.txt"
}

# kv KEY LINE: the value of KEY in a "k=v k=v" line (jvm_nmt, rdma_counts).
kv() { echo "$2" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }

# --- scenarios in parts ------------------------------------------------------------------------------------------
# A scenario of several parts (functions part_NAME, e.g. one boot for several faults) runs them with
# lab_run_parts "NAME...". A part that fails calls `lab_part_fail NAME REASON; return`: the result NAME_failed=REASON
# is recorded, the scenario's part_cleanup NAME runs if it defines one (stop what the part left running), and the
# next part still runs; a part that held calls lab_part_ok NAME (result NAME_ok=1). Before each part the scenario's
# part_precheck NAME runs if defined: a non-zero status fails the part with the reason it printed. Each part's wall
# time is the result NAME_wall_s. lab_run_parts returns 1 if any part failed; LAB_PARTS_FAILED names them.
LAB_PARTS_FAILED=""
lab_part_fail() {
  lab_log "PART $1 FAILED: $2"
  lab_result "$1_failed" "$(echo "$2" | tr '\n=' ' :')"
  LAB_PARTS_FAILED="$LAB_PARTS_FAILED $1"
  rdma_snapshot "$1-failed"
  if declare -F part_cleanup > /dev/null; then part_cleanup "$1"; fi
  return 1
}
lab_part_ok() { lab_result "$1_ok" 1; lab_log "PART $1 passed"; }
lab_run_parts() {
  local p t0 why
  for p in $1; do
    lab_log "==== part $p"
    t0=$(cut -d' ' -f1 /proc/uptime)
    if declare -F part_precheck > /dev/null && ! why=$(part_precheck "$p"); then
      lab_part_fail "$p" "not run: $why"
    else
      "part_$p"
    fi
    lab_result "${p}_wall_s" "$(lab_elapsed "$t0")"
  done
  [ -z "$LAB_PARTS_FAILED" ]
}
