#!/bin/bash
# The daemon as an operator runs it (bin/nvmf-target serve --config FILE, the YAML written here) serving two
# Linux hosts at once over Soft-RoCE, one subsystem with a RAM and a FILE namespace:
#   allowed_hosts lists hosts A and B (allow_any_host false); host C's `nvme connect` fails, the host driver
#   says "Connect for subsystem ... is not allowed, hostnqn: C", the daemon counts host_not_allowed;
#   A and B connected at the same time: two controllers (distinct cntlid), fio crc32c verify on both at once,
#   on distinct LBA ranges of the same namespaces, mixed block sizes (bssplit), RAM and file namespace;
#   `nvme reset` of A's controller during A's and B's fio: the controller comes back live, A's data verifies
#   after the reset, B's concurrent verify passes;
#   `nvme disconnect` of B during B's I/O: A's concurrent verify passes (the daemon keeps serving);
#   SIGTERM: exit 0; no host driver complaint in dmesg; no QP / cm_id of the daemon left.
#
# Two hosts in one guest: both controllers come from the same kernel, told apart by host NQN and host ID
# (`nvme connect -q NQN -I UUID`), A from 10.77.0.2 and B from 10.77.0.3 (both on vb/rxe1; see below why).
# With native NVMe multipath (nvme_core multipath=Y, Debian's default) the kernel joins both controllers into one nvme-subsystem (same subsystem NQN, CMIC multi-controller, NMIC
# shared) and shows each namespace ONCE, as /dev/nvmeXnY with two hidden paths (nvmeXcYnZ, no device node),
# sending I/O down one path (iopolicy numa): fio could not say which controller it drives, a reset would be a
# failover instead of a reset under I/O, and "the other host is unaffected" could not be told apart. Two real
# hosts each see their own controller. So this scenario reloads nvme_core with multipath=N (before nvme_rdma
# is loaded again): each controller gets its own block devices (/dev/nvme<ctrl>n<head>), and every fio job
# below runs on one controller's device, i.e. through that controller's own queues and QPs. The namespaces
# are still the same on the target (same NSID, shared), hence the distinct LBA ranges per host. (6.1 logs
# "Found shared namespace N, but multipathing not supported" for the second controller: expected here.)
#
# Environment: NVMF_BUILD_DIR (the Maven output folder bin/nvmf-target looks in; default target). When that
# build has no (up-to-date) packaged jar, the same main class runs from LAB_CLASSPATH with the launcher's JVM
# options; the result `launcher` says which.
# Results (1 = held): multipath, launcher, daemon_ready, discover_ok, denied_connect_failed,
# denied_host_dmesg, denied_no_ctrl, denied_metric, connect_a_ok, connect_b_ok, devices, two_controllers,
# controllers_metric, connected_hosts_metric, concurrent_verify_ok, reset_during_io, reset_rc, reset_live,
# reset_live_s, reset_fio_alive_after_reset, cntlid_a_after_reset, reset_fio_rc, reset_fio_error,
# reset_verify_only_ok (1 or skipped), after_reset_verify_ok, reset_other_host_ok, disconnect_during_io,
# disconnect_fio_error, daemon_alive_after_disconnect, disconnect_other_host_ok, idle_qp, idle_cm_id,
# sigterm_exit, daemon_log_drained, dmesg_clean, keepalive_expiries, host_error_recoveries (counts, not
# asserted), leftover_qp, leftover_cm_id, multihost_wall_s.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
NQN=nqn.2024-01.dev.nvmf:lab-multihost
PORT=4420
METRICS=127.0.0.1:9464
HOSTA_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000000a01
HOSTB_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000000b02
HOSTC_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000000c03
HOSTA=nqn.2014-08.org.nvmexpress:uuid:$HOSTA_ID
HOSTB=nqn.2014-08.org.nvmexpress:uuid:$HOSTB_ID
HOSTC=nqn.2014-08.org.nvmexpress:uuid:$HOSTC_ID
CFG=$LAB_RUN/multihost.yaml
FILE_DIR=$LAB_RUN/nvmf-files     # /run is the guest's tmpfs
NS2_FILE=$FILE_DIR/ns2.img
NS_MIB=32
mkdir -p "$LAB_RUN" "$LAB_LOGS" "$FILE_DIR"
dmesg -C 2>/dev/null || true

# --- helpers ---------------------------------------------------------------------------------------------------

# ctrl_for_host HOSTNQN: the controller (nvmeX) of our subsystem connected with that host NQN.
ctrl_for_host() {
  local c
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && [ "$(cat "$c/hostnqn" 2>/dev/null)" = "$1" ] \
      && { basename "$c"; return 0; }
  done
  return 1
}
# ctrl_ns_dev CTRL NSID: the block device of namespace NSID reached through controller CTRL (multipath=N: the
# disk's parent device is the controller).
ctrl_ns_dev() {
  local b n
  for b in /sys/block/nvme*; do
    n=${b##*/}
    case $n in *c[0-9]*n*) continue ;; esac
    [ "$(basename "$(readlink -f "$b/device")")" = "$1" ] && [ "$(cat "$b/nsid" 2>/dev/null)" = "$2" ] \
      && [ -b "/dev/$n" ] && { echo "/dev/$n"; return 0; }
  done
  return 1
}
ctrl_state() { cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone; }
# writes_done DEV: writes completed on a block device (field 5 of /sys/block/X/stat).
writes_done() { awk '{ print $5 }' "/sys/block/${1#/dev/}/stat" 2>/dev/null || echo 0; }
metric() { # metric REGEX: the sum of the metric lines matching REGEX (Prometheus text format)
  curl -s "http://$METRICS/metrics" | awk -v re="$1" '$0 ~ re && !/^#/ { s += $NF } END { printf "%d", s }'
}
# connect_host NAME HOSTNQN HOSTID HOST_TRADDR: nvme connect as that host; output in logs/connect-NAME.log.
connect_host() {
  run_step "connect-$1" 60 nvme connect -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" -n "$NQN" -w "$4" \
    -q "$2" -I "$3" --reconnect-delay=1 --ctrl-loss-tmo=60
}
# fio_bg NAME OPTIONS...: fio in the background (terse + normal output in logs/NAME.log).
fio_bg() { local n=$1; shift; start_bg "$n" fio --output-format=terse,normal "$@"; }
# fio_wait NAME TIMEOUT_S: waits for a background fio to end, returns its exit status (kills it at the bound);
# sets FIO_ERRORS to the sum of the jobs' error fields (terse field 5), or "none" when no job reported.
fio_wait() {
  local rc
  wait_for "! bg_alive $1" "$2" "fio $1 ends" || lab_log "fio $1 still running after $2 s: stopping it"
  stop_bg "$1" 10
  rc=$?
  FIO_ERRORS=$(awk -F';' '/^3;fio-/ { n++; s += $5 } END { if (n) print s; else print "none" }' "$LAB_LOGS/$1.log")
  lab_log "fio $1: exit $rc, errors $FIO_ERRORS"
  return $rc
}
fio_ok() { fio_wait "$1" "$2" && [ "$FIO_ERRORS" = 0 ]; }
# Common fio options: direct libaio, mixed block sizes, random writes each stamped with a crc32c header, read
# back and checked at the end of the job (verify_fatal: the first mismatch fails the job).
FIO_COMMON=(--ioengine=libaio --direct=1 --rw=randwrite --bssplit=4k/50:16k/20:64k/20:128k/10 --iodepth=8
  --verify=crc32c --do_verify=1 --verify_fatal=1)
# Host A uses [0, 12 MiB) of each namespace, host B [16 MiB, 28 MiB): both write the same namespaces at once.
A_OFF=0
B_OFF=16M

# --- host B's own address ---------------------------------------------------------------------------------------
# nvme-cli 2.3 (Debian 12) refuses a second `nvme connect` to a subsystem address from a source address that
# already has a controller to it, whatever the host NQN ("already connected", even with --duplicate-connect;
# the kernel itself tells controllers apart by host NQN and host ID). Host B therefore connects from a second
# address on vb (rxe1 gets a GID for it), as a second machine would: another host NQN, ID and address.
HOSTB_ADDR=10.77.0.3
ip addr add "$HOSTB_ADDR/24" dev vb || lab_die "cannot add $HOSTB_ADDR to vb"
wait_for "grep -qi 'ffff:0a4d:0003' /sys/class/infiniband/rxe1/ports/1/gids/*" 30 "rxe1 GID for $HOSTB_ADDR" \
  || lab_die "rxe1 has no GID for $HOSTB_ADDR"

# --- multipath off (see the header) ---------------------------------------------------------------------------
lab_result multipath_before "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)"
if [ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" != N ]; then
  run_step nvme-core-reload 60 sh -c 'modprobe -r nvme_rdma &&
    for m in nvme_fabrics nvme_core; do if grep -q "^$m " /proc/modules; then rmmod $m || exit 1; fi; done &&
    modprobe nvme_core multipath=N && modprobe nvme_rdma' || lab_die "cannot reload nvme_core with multipath=N"
fi
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = N ] || lab_die "nvme_core multipath is not N"
lab_result multipath N

# --- configuration and the daemon ------------------------------------------------------------------------------
truncate -s "${NS_MIB}M" "$NS2_FILE" || lab_die "cannot create $NS2_FILE"
cat > "$CFG" <<YAML
hosts:
  - nqn: $HOSTA
  - nqn: $HOSTB
  - nqn: $HOSTC        # known, but not allowed on the subsystem below
subsystems:
  - nqn: $NQN
    allow_any_host: false
    allowed_hosts: [$HOSTA, $HOSTB]
    namespaces:
      - nsid: 1
        ram_size: ${NS_MIB}MiB
      - nsid: 2
        file: $NS2_FILE
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
metrics:
  enabled: true
  listen: $METRICS
logging:
  format: plain
YAML
cp "$CFG" "$LAB_LOGS/multihost.yaml"

lab_nvmf_command || lab_die "no java"
# (`nvmf-target check-config` would cost another JVM start, ~30 s under TCG; serve validates the file the same
# way and refuses to start on an error, which the wait below reports with the daemon's log.)
start_bg daemon "${LAB_NVMF[@]}" serve --config "$CFG"
wait_for_log daemon ' ready: ' 120 || lab_die "daemon did not become ready"
lab_result daemon_ready 1

run_step nvme-discover 60 nvme discover -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" -w "$LAB_HOST_ADDR" -q "$HOSTA" \
  -I "$HOSTA_ID" || lab_die "nvme discover"
grep -q "subnqn: *$NQN" "$LAB_LOGS/nvme-discover.log" || lab_die "discovery log does not list $NQN"
lab_result discover_ok 1

# --- host C is not allowed -------------------------------------------------------------------------------------
connect_host c "$HOSTC" "$HOSTC_ID" "$LAB_HOST_ADDR"
RC=$?
[ $RC -ne 0 ] || lab_die "host C (not in allowed_hosts) connected"
[ $RC -ne 124 ] && [ $RC -ne 137 ] || lab_die "host C's connect hung instead of failing"
lab_result denied_connect_failed 1
# What the host reports: the Connect response's status (Connect Invalid Host) decoded by nvme-fabrics.
wait_for "dmesg | grep -q 'Connect for subsystem $NQN is not allowed, hostnqn: $HOSTC'" 30 \
  "host driver reports host C not allowed" || { dmesg | tail -n 20 >&2; lab_die "no 'not allowed' in dmesg"; }
lab_result denied_host_dmesg 1
ctrl_for_host "$HOSTC" > /dev/null && lab_die "a controller for host C exists"
lab_result denied_no_ctrl 1
wait_for "[ \$(metric '^nvmf_connect_failures_total\\{.*reason=\"host_not_allowed\"') -ge 1 ]" 30 \
  "daemon counts the refused Connect" || lab_die "nvmf_connect_failures_total{reason=host_not_allowed} is 0"
grep -q "Connect refused: host_not_allowed" "$LAB_LOGS/daemon.log" || lab_die "daemon log has no refused Connect"
lab_result denied_metric 1

# --- hosts A and B, two controllers on one subsystem -----------------------------------------------------------
connect_host a "$HOSTA" "$HOSTA_ID" "$LAB_HOST_ADDR" || lab_die "nvme connect as host A"
wait_for "ctrl_for_host $HOSTA" 30 "controller of host A" || lab_die "no controller for host A"
CA=$(ctrl_for_host "$HOSTA")
lab_result connect_a_ok 1
connect_host b "$HOSTB" "$HOSTB_ID" "$HOSTB_ADDR" || lab_die "nvme connect as host B"
wait_for "ctrl_for_host $HOSTB" 30 "controller of host B" || lab_die "no controller for host B"
CB=$(ctrl_for_host "$HOSTB")
lab_result connect_b_ok 1
[ "$CA" != "$CB" ] || lab_die "hosts A and B share controller $CA"
wait_for "[ \$(ctrl_state $CA) = live ] && [ \$(ctrl_state $CB) = live ]" 60 "controllers $CA and $CB live" \
  || lab_die "controllers not live"
for v in 1 2; do
  wait_for "ctrl_ns_dev $CA $v && ctrl_ns_dev $CB $v" 60 "namespace $v on $CA and $CB" \
    || { ls -l /sys/block >&2; lab_die "namespace $v missing on a controller"; }
done
A1=$(ctrl_ns_dev "$CA" 1); A2=$(ctrl_ns_dev "$CA" 2); B1=$(ctrl_ns_dev "$CB" 1); B2=$(ctrl_ns_dev "$CB" 2)
CNTLID_A=$(cat "/sys/class/nvme/$CA/cntlid"); CNTLID_B=$(cat "/sys/class/nvme/$CB/cntlid")
lab_log "host A: $CA (cntlid $CNTLID_A) $A1 $A2; host B: $CB (cntlid $CNTLID_B) $B1 $B2"
lab_result devices "A:$CA:$A1,$A2;B:$CB:$B1,$B2"
[ "$CNTLID_A" != "$CNTLID_B" ] || lab_die "both controllers have cntlid $CNTLID_A"
lab_result two_controllers 1
run_step nvme-list 30 nvme list -v
CTRLS=$(metric "^nvmf_controllers\\{.*subsystem=\"$NQN\"")
HOSTS=$(metric "^nvmf_connected_hosts\\{.*subsystem=\"$NQN\"")
lab_result controllers_metric "$CTRLS"
lab_result connected_hosts_metric "$HOSTS"
[ "$CTRLS" = 2 ] && [ "$HOSTS" = 2 ] || lab_die "daemon metrics: $CTRLS controllers, $HOSTS hosts (want 2, 2)"

# Both hosts at once, both namespaces, distinct ranges, mixed block sizes; each must verify.
fio_bg fio-a "${FIO_COMMON[@]}" --randrepeat=0 \
  --name=a-ram --filename="$A1" --offset=$A_OFF --size=8M --name=a-file --filename="$A2" --offset=$A_OFF --size=8M
fio_bg fio-b "${FIO_COMMON[@]}" --randrepeat=0 \
  --name=b-ram --filename="$B1" --offset=$B_OFF --size=8M --name=b-file --filename="$B2" --offset=$B_OFF --size=8M
fio_ok fio-a 300; RA=$?; fio_ok fio-b 300; RB=$?
[ $RA = 0 ] || lab_die "host A's concurrent verify failed (logs/fio-a.log)"
[ $RB = 0 ] || lab_die "host B's concurrent verify failed (logs/fio-b.log)"
lab_result concurrent_verify_ok 1

# --- nvme reset of A's controller during I/O on both hosts ----------------------------------------------------
# A writes (no verify yet: errors are allowed while the controller resets); rate-limited so that it is still
# writing when the reset comes. Fixed seeds: the verify-only pass after the reset replays the same offsets and
# sizes and checks what this pass wrote. B writes and verifies at the same time, across A's reset.
# Options before the first --name are global (fio), so the jobs come last.
FIO_A_RESET=(--ioengine=libaio --direct=1 --rw=randwrite --bssplit=4k/50:16k/20:64k/20:128k/10 --iodepth=8
  --verify=crc32c --randseed=4242)
FIO_A_RESET_JOBS=(--name=a-ram --filename="$A1" --offset=$A_OFF --size=12M
  --name=a-file --filename="$A2" --offset=$A_OFF --size=12M)
fio_bg fio-a-reset "${FIO_A_RESET[@]}" --do_verify=0 --rate_iops=60 "${FIO_A_RESET_JOBS[@]}"
fio_bg fio-b-reset "${FIO_COMMON[@]}" --randrepeat=0 --rate_iops=60 \
  --name=b-ram --filename="$B1" --offset=$B_OFF --size=12M --name=b-file --filename="$B2" --offset=$B_OFF --size=12M
W0=$(writes_done "$A1")
wait_for "[ \$(writes_done $A1) -ge $((W0 + 40)) ] && [ \$(writes_done $B1) -ge 20 ]" 120 "I/O flowing on A and B" \
  || lab_die "fio did not start writing"
bg_alive fio-a-reset && bg_alive fio-b-reset || lab_die "a fio ended before the reset"
lab_result reset_during_io 1
TR=$(cut -d' ' -f1 /proc/uptime)
# `nvme reset` returns once the reset work is done (or failed); then the state must be live again. A refused
# reset (EBUSY: the controller was already recovering) would mean no reset under I/O happened: that fails.
run_step nvme-reset-a 120 nvme reset "/dev/$CA"
RRC=$?
wait_for "[ \$(ctrl_state $CA) = live ]" 120 "controller $CA live again after reset" \
  || lab_die "controller $CA not live after reset (state $(ctrl_state "$CA"), nvme reset exit $RRC)"
LIVE_S=$(lab_elapsed "$TR")
[ "$RRC" = 0 ] || lab_die "nvme reset /dev/$CA exit $RRC"
dmesg | grep -q "nvme $CA: resetting controller" || lab_die "the host driver did not log the reset of $CA"
bg_alive fio-a-reset && lab_result reset_fio_alive_after_reset 1
lab_result reset_rc "$RRC"
lab_result reset_live 1
lab_result reset_live_s "$LIVE_S"
lab_result cntlid_a_after_reset "$(cat "/sys/class/nvme/$CA/cntlid")"
bg_alive daemon || lab_die "daemon died during the reset"
fio_wait fio-a-reset 300
RESET_FIO_RC=$?
lab_result reset_fio_rc "$RESET_FIO_RC"
lab_result reset_fio_error "$FIO_ERRORS"
# The verify pass on A after the reset: when A's writes all succeeded across the reset, the verify-only pass
# re-reads exactly those blocks; a write that failed in the reset window makes that pass meaningless, so then
# only the fresh write+verify pass below counts (the result says which).
if [ "$RESET_FIO_RC" = 0 ] && [ "$FIO_ERRORS" = 0 ]; then
  run_step fio-a-verify-only 300 fio --output-format=terse,normal "${FIO_A_RESET[@]}" --verify_only=1 \
    "${FIO_A_RESET_JOBS[@]}" || lab_die "verify of A's data written across the reset failed (logs/fio-a-verify-only.log)"
  grep -q '^3;fio-' "$LAB_LOGS/fio-a-verify-only.log" || lab_die "verify-only pass printed no result"
  lab_result reset_verify_only_ok 1
else
  lab_result reset_verify_only_ok skipped
fi
fio_bg fio-a-after-reset "${FIO_COMMON[@]}" --randrepeat=0 \
  --name=a-ram --filename="$A1" --offset=$A_OFF --size=4M --name=a-file --filename="$A2" --offset=$A_OFF --size=4M
fio_ok fio-a-after-reset 300 || lab_die "host A's verify after the reset failed (logs/fio-a-after-reset.log)"
lab_result after_reset_verify_ok 1
fio_ok fio-b-reset 300 || lab_die "host B's verify across A's reset failed (logs/fio-b-reset.log)"
lab_result reset_other_host_ok 1

# --- nvme disconnect of B during its I/O; A keeps working ------------------------------------------------------
fio_bg fio-a-disc "${FIO_COMMON[@]}" --randrepeat=0 --rate_iops=60 \
  --name=a-ram --filename="$A1" --offset=$A_OFF --size=8M --name=a-file --filename="$A2" --offset=$A_OFF --size=8M
fio_bg fio-b-disc --ioengine=libaio --direct=1 --rw=randrw --bssplit=4k/50:16k/20:64k/20:128k/10 --iodepth=8 \
  --time_based --runtime=600 \
  --name=b-ram --filename="$B1" --offset=$B_OFF --size=12M --name=b-file --filename="$B2" --offset=$B_OFF --size=12M
WA=$(writes_done "$A1"); WB=$(writes_done "$B1")
wait_for "[ \$(writes_done $A1) -ge $((WA + 20)) ] && [ \$(writes_done $B1) -ge $((WB + 20)) ]" 120 \
  "I/O flowing on A and B" || lab_die "fio did not start"
bg_alive fio-b-disc || lab_die "B's fio ended before the disconnect"
lab_result disconnect_during_io 1
# 180 s: a host in an error recovery of its own waits out its 30-s I/O timeout first (tests/lab/README.md, "Host I/O
# stalls").
run_step nvme-disconnect-b 180 nvme disconnect -d "$CB" || lab_die "nvme disconnect -d $CB"
wait_for "! ctrl_for_host $HOSTB" 60 "controller of host B removed" || lab_die "B's controller still there"
fio_wait fio-b-disc 120
lab_result disconnect_fio_error "$FIO_ERRORS"
bg_alive daemon || lab_die "daemon died when host B disconnected"
lab_result daemon_alive_after_disconnect 1
fio_ok fio-a-disc 300 || lab_die "host A's verify across B's disconnect failed (logs/fio-a-disc.log)"
wait_for "[ \$(ctrl_state $CA) = live ]" 60 "A's controller live after B's disconnect" \
  || lab_die "A's controller is $(ctrl_state "$CA") after B's disconnect"
lab_result disconnect_other_host_ok 1
wait_for "[ \$(metric '^nvmf_controllers\\{.*subsystem=\"$NQN\"') = 1 ]" 60 "daemon counts one controller" \
  || lab_die "daemon still counts $(metric "^nvmf_controllers\\{.*subsystem=\"$NQN\"") controllers"

# --- the end: A disconnects, the daemon is idle, SIGTERM -------------------------------------------------------
run_step nvme-disconnect-a 180 nvme disconnect -d "$CA" || lab_die "nvme disconnect -d $CA"
wait_for "! ctrl_for_host $HOSTA" 60 "controller of host A removed" || lab_die "A's controller still there"
# rdma resource shows the creating thread's id: match every thread of the daemon's JVM.
# The launcher execs java: the background pid is the JVM's.
DPID=$(bg_pid daemon)
TIDS=$(ls "/proc/$DPID/task" 2>/dev/null | paste -sd'|')
ours() { rdma resource show "$1" | grep -cE "pid ($TIDS) |comm java"; }
wait_for "[ \$(ours qp) = 0 ]" 60 "the daemon's QPs released with no host connected" || true
{ for r in qp cm_id; do echo "# $r"; rdma resource show $r; done; } > "$LAB_LOGS/rdma-idle.txt" 2>&1
lab_result idle_qp "$(ours qp)"
lab_result idle_cm_id "$(ours cm_id)"
lab_collect_logs
stop_bg daemon 90
RC=$?
lab_result sigterm_exit "$RC"
[ "$RC" = 0 ] || { tail -n 40 "$LAB_LOGS/daemon.log" >&2; lab_die "daemon exit status $RC after SIGTERM"; }
grep -q 'stopped: every queue drained' "$LAB_LOGS/daemon.log" && lab_result daemon_log_drained 1

dmesg > "$LAB_LOGS/dmesg-host.txt" 2>&1
if grep -Ei "bogus remote invalidation|keyed sgl|icdoff|invalid sgl" "$LAB_LOGS/dmesg-host.txt" >&2; then
  lab_die "host driver complained (see dmesg-host.txt)"
fi
lab_result dmesg_clean 1
# Not failures by themselves, but worth seeing: controllers the daemon tore down for keep-alive expiry (the host
# recovers by reconnecting; seen when the build machine runs several TCG guests at once) and the host's error
# recoveries (anything that made it reconnect).
lab_result keepalive_expiries "$(grep -c 'keep-alive timeout' "$LAB_LOGS/daemon.log")"
lab_result host_error_recoveries "$(grep -c 'starting error recovery' "$LAB_LOGS/dmesg-host.txt")"
{ for r in qp cm_id; do echo "# $r"; rdma resource show $r; done; } > "$LAB_LOGS/rdma-after.txt" 2>&1
lab_result leftover_qp "$(ours qp)"
lab_result leftover_cm_id "$(ours cm_id)"
lab_result multihost_wall_s "$(lab_elapsed "$T0")"
echo "daemon-multihost: PASS"
