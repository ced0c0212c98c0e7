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
LAB_TARGET_ADDR=10.77.0.1
LAB_HOST_ADDR=10.77.0.2
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
  rdma link add rxe0 type rxe netdev va
  rdma link add rxe1 type rxe netdev vb
  set +e
  wait_for "rdma link show rxe0/1 | grep -q 'state ACTIVE' && rdma link show rxe1/1 | grep -q 'state ACTIVE'" \
    30 "rxe0 and rxe1 ACTIVE" || return 1
  rdma link show
  ls /dev/infiniband
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
