#!/bin/bash
# ANA multipath across two target daemons (issue 11), with the Linux host's native NVMe multipath, in one boot:
#   Two daemons (dev.nvmf.target.cli.Main serve, each with its own YAML and control socket) export the same
#   subsystem NQN with the same namespace (NSID 1, same NGUID/UUID/serial, disjoint controller id ranges) over ONE
#   file. Daemon A listens on 10.77.0.1 (port 1, ANA group 1 optimized), daemon B on 10.77.0.3 (port 2, group 1
#   non-optimized; an address added to va, so both daemons are reached over the veth pair from the host side
#   10.77.0.2, as daemon-multihost adds a host address). The host connects to both.
#   1. The host shows one subsystem with two controllers and ONE namespace (/dev/nvmeXn1) with two paths whose
#      ana_state is optimized (A) and non-optimized (B); fio goes to A only (the daemons' write counters).
#   2. fio crc32c verify runs while daemon A is killed with SIGKILL: the host fails the I/O over to B, fio sees no
#      error and its verify (reads through B of what A wrote) passes. A restarts (its stale control socket is
#      replaced), the host reconnects, A's path is optimized again and I/O goes back to it.
#   3. A reload (SIGHUP, edited YAML) flips the states: B optimized, A non-optimized; the host re-reads the ANA log on
#      the change notice and I/O follows to B.
#   4. `nvmf-target ana set` on B's control socket makes group 1 inaccessible there (a planned failover): I/O falls
#      back to A (non-optimized).
#   The end: disconnect, SIGTERM both daemons (exit 0), no "Duplicate cntlid"/"IDs don't match" in dmesg.
#
# The shared file: ext4 on a loop device (over a file in the guest's tmpfs), so that both daemons open it O_DIRECT
# (tmpfs itself refuses O_DIRECT on Linux 6.1). Two daemons on one file are coherent here because neither caches
# anything: every write reaches the file system before it completes, every read goes to it (no page cache in
# between). With buffered_io both would still be coherent in this guest (one kernel, one page cache), but not on
# two machines, which is what the scenario stands for; a shared block device or an RBD image gives the same
# guarantee O_DIRECT gives here (docs/scale-out.md).
#
# Results (1 = held): multipath, direct_io, daemons_ready, connected, one_subsystem, two_paths, one_namespace,
# ana_a_optimized, ana_b_non_optimized, io_on_optimized, failover_fio_ok, failover_fio_error, failover_moved_to_b,
# failover_s, a_restarted, stale_socket_replaced, a_path_back, a_path_back_s, io_back_on_a, reload_flipped,
# reload_io_follows, ana_set_ok, ana_set_flipped, ana_set_io_follows, sigterm_a, sigterm_b, dmesg_clean,
# write bytes per phase (bytes_*), ana_wall_s.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
NQN=nqn.2024-01.dev.nvmf:lab-ana
A_ADDR=$LAB_TARGET_ADDR
B_ADDR=10.77.0.3
MA=9464
MB=9465
SOCK_A=$LAB_RUN/ctl/a.sock
SOCK_B=$LAB_RUN/ctl/b.sock
FS=$LAB_RUN/ana-fs
NSFILE=$FS/ns1.img
mkdir -p "$LAB_RUN" "$LAB_LOGS" "$FS"
dmesg -C 2>/dev/null || true

# bin/nvmf-target as an operator runs it (the daemons with the build's AOT cache, `ana set` without).
lab_nvmf_command || lab_die "no java"
NVMF=("${LAB_NVMF[@]}")

# --- helpers ---------------------------------------------------------------------------------------------------

# ctrl_at ADDR: the controller (nvmeX) of our subsystem connected to ADDR.
ctrl_at() {
  local c
  for c in /sys/class/nvme/nvme*; do
    [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && grep -q "traddr=$1," "$c/address" 2>/dev/null \
      && { basename "$c"; return 0; }
  done
  return 1
}
ctrl_state() { cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone; }
# ana_of CTRL: the ANA state the host holds for namespace 1 through that controller (its hidden path device).
ana_of() {
  local p
  for p in /sys/class/nvme/"$1"/nvme*c*n*; do
    [ -e "$p/ana_state" ] && [ "$(cat "$p/nsid" 2>/dev/null)" = 1 ] && { cat "$p/ana_state"; return 0; }
  done
  echo none
}
# path_is CTRL STATE: the controller is live and its path to namespace 1 is in STATE.
path_is() { [ "$(ctrl_state "$1")" = live ] && [ "$(ana_of "$1")" = "$2" ]; }
# written PORT: bytes the daemon on metrics PORT has written (0 when it does not answer).
written() {
  curl -s --max-time 5 "http://127.0.0.1:$1/metrics" \
    | awk '/^nvmf_io_bytes_total\{/ && /opcode="write"/ { s += $NF } END { printf "%d", s }'
}
# config FILE PORT_ID ADDR CNTLID_MIN CNTLID_MAX STATE METRICS_PORT: one daemon's YAML. The subsystem section is
# the same on both but for the controller id range.
config() {
  cat > "$1" <<YAML
subsystems:
  - nqn: $NQN
    serial: ANAMPATH0001
    cntlid_min: $4
    cntlid_max: $5
    allow_any_host: true
    namespaces:
      - nsid: 1
        file: $NSFILE
        uuid: 3f1c2b7a-9d4e-4a61-8b2f-0c5d6e7f8091
        nguid: 5e2a7c1d9b3f4e6a8c0d1e2f3a4b5c6d
ports:
  - id: $2
    traddr: $3
    trsvcid: 4420
    subsystems: [$NQN]
    ana_groups:
      - {grpid: 1, state: $6}
metrics:
  enabled: true
  listen: 127.0.0.1:$7
logging:
  format: plain
YAML
  cp "$1" "$LAB_LOGS/$(basename "$1").$(lab_elapsed "$T0")"
}
CFG_A=$LAB_RUN/daemon-a.yaml
CFG_B=$LAB_RUN/daemon-b.yaml
start_daemon() { # NAME CONFIG SOCKET
  start_bg "$1" "${NVMF[@]}" serve --config "$2" --control-socket "$3"
}
# fio_short NAME: 2 MiB of 4 KiB random writes with crc32c verify on the multipath device.
fio_short() {
  fio_run "$1" 300 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --size=2M --iodepth=8 \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0
}
# io_goes_to NAME TO OTHER: runs fio_short and checks that the daemon on metrics port TO wrote and OTHER did not.
io_goes_to() {
  local a0 b0 a1 b1
  a0=$(written "$2"); b0=$(written "$3")
  fio_short "$1" || lab_die "fio $1 (logs/$1.log)"
  [ "$FIO_ERROR" = 0 ] || lab_die "fio $1 reported error $FIO_ERROR"
  a1=$(written "$2"); b1=$(written "$3")
  lab_result "bytes_$1_expected" $((a1 - a0))
  lab_result "bytes_$1_other" $((b1 - b0))
  [ $((a1 - a0)) -ge $((2 << 20)) ] || lab_die "$1: the daemon on :$2 wrote $((a1 - a0)) bytes, not the 2 MiB"
  [ $((b1 - b0)) = 0 ] || lab_die "$1: the daemon on :$3 wrote $((b1 - b0)) bytes; I/O should not go there"
}

# --- native multipath -----------------------------------------------------------------------------------------
MP=$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)
lab_result multipath_before "$MP"
if [ "$MP" != Y ]; then
  run_step nvme-core-reload 60 sh -c 'modprobe -r nvme_rdma &&
    for m in nvme_fabrics nvme_core; do if grep -q "^$m " /proc/modules; then rmmod $m || exit 1; fi; done &&
    modprobe nvme_core multipath=Y && modprobe nvme_rdma' || lab_die "cannot reload nvme_core with multipath=Y"
fi
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = Y ] || lab_die "nvme_core multipath is not Y"
lab_result multipath 1

# --- daemon B's address, the shared file ----------------------------------------------------------------------
ip addr add "$B_ADDR/24" dev va || lab_die "cannot add $B_ADDR to va"
wait_for "grep -qi 'ffff:0a4d:0003' /sys/class/infiniband/rxe0/ports/1/gids/*" 30 "rxe0 GID for $B_ADDR" \
  || lab_die "rxe0 has no GID for $B_ADDR"
modprobe loop 2>/dev/null
truncate -s 96M "$LAB_RUN/ana-backing.img" || lab_die "backing file"
LOOP=$(losetup -f --show "$LAB_RUN/ana-backing.img") || lab_die "losetup"
run_step mkfs 120 mkfs.ext4 -q -F "$LOOP" || lab_die "mkfs.ext4 $LOOP"
mount "$LOOP" "$FS" || lab_die "mount $LOOP"
truncate -s 32M "$NSFILE" || lab_die "namespace file"

# --- two daemons ----------------------------------------------------------------------------------------------
config "$CFG_A" 1 "$A_ADDR" 1 99 optimized $MA
config "$CFG_B" 2 "$B_ADDR" 100 199 non-optimized $MB
start_daemon daemon-a "$CFG_A" "$SOCK_A"
start_daemon daemon-b "$CFG_B" "$SOCK_B"
wait_for_log daemon-a ' ready: ' 300 || lab_die "daemon A did not become ready"
wait_for_log daemon-b ' ready: ' 300 || lab_die "daemon B did not become ready"
lab_result daemons_ready 1
grep -q 'refuses O_DIRECT' "$LAB_LOGS/daemon-a.log" "$LAB_LOGS/daemon-b.log" || lab_result direct_io 1

# --- the host: one namespace, two paths ------------------------------------------------------------------------
# Reconnect every second after a path is lost, for up to 10 minutes (a daemon restarts within that).
for addr in "$A_ADDR" "$B_ADDR"; do
  run_step "connect-$addr" 60 nvme connect -t rdma -a "$addr" -s 4420 -n "$NQN" -w "$LAB_HOST_ADDR" \
    --reconnect-delay=1 --ctrl-loss-tmo=600 || lab_die "nvme connect $addr"
done
wait_for "ctrl_at $A_ADDR && ctrl_at $B_ADDR" 60 "controllers to A and B" || lab_die "no controller to A or B"
CA=$(ctrl_at "$A_ADDR"); CB=$(ctrl_at "$B_ADDR")
lab_result connected 1
wait_for "path_is $CA optimized && path_is $CB non-optimized" 60 "paths: $CA optimized, $CB non-optimized" \
  || lab_die "ANA states on the host: $CA $(ana_of "$CA"), $CB $(ana_of "$CB")"
lab_result ana_a_optimized 1
lab_result ana_b_non_optimized 1
SUBSYS=
for s in /sys/class/nvme-subsystem/*; do
  [ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$NQN" ] && SUBSYS="$SUBSYS $(basename "$s")"
done
SUBSYS=${SUBSYS# }
[ -n "$SUBSYS" ] && [ "$(echo "$SUBSYS" | wc -w)" = 1 ] || lab_die "host subsystems for $NQN: '$SUBSYS'"
lab_result one_subsystem 1
[ -e "/sys/class/nvme-subsystem/$SUBSYS/$CA" ] && [ -e "/sys/class/nvme-subsystem/$SUBSYS/$CB" ] \
  || { ls -l "/sys/class/nvme-subsystem/$SUBSYS" >&2; lab_die "$CA and $CB are not both in $SUBSYS"; }
lab_result two_paths 1
HEADS=$(ls -d /sys/class/nvme-subsystem/"$SUBSYS"/nvme*n* 2>/dev/null | grep -vc 'c[0-9]*n' )
[ "$HEADS" = 1 ] || { ls -l "/sys/class/nvme-subsystem/$SUBSYS" >&2; lab_die "$HEADS namespaces, not one"; }
DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no multipath namespace device"
lab_result one_namespace 1
lab_log "subsystem $SUBSYS: $CA (cntlid $(cat /sys/class/nvme/$CA/cntlid)) and $CB (cntlid" \
  "$(cat /sys/class/nvme/$CB/cntlid)), namespace $DEV"
run_step list-subsys 30 nvme list-subsys
run_step nvme-list 30 nvme list -v
io_goes_to io-optimized $MA $MB
lab_result io_on_optimized 1

# --- SIGKILL of the optimized daemon under fio verify -----------------------------------------------------------
start_bg fio-failover fio --output-format=terse,normal --name=failover --filename="$DEV" --ioengine=libaio \
  --direct=1 --rw=randwrite --bs=4k --size=12M --iodepth=8 --rate_iops=100 --verify=crc32c --do_verify=1 \
  --verify_fatal=1 --randrepeat=0
A0=$(written $MA)
wait_for "[ \$(written $MA) -ge $((A0 + (3 << 20))) ]" 180 "3 MiB of fio's writes through A" \
  || lab_die "fio's writes do not reach A"
bg_alive fio-failover || lab_die "fio ended before the kill"
B0=$(written $MB)
TK=$(cut -d' ' -f1 /proc/uptime)
lab_log "SIGKILL daemon A (pid $(bg_pid daemon-a))"
kill -KILL "$(bg_pid daemon-a)"
wait_for "[ \$(written $MB) -gt $B0 ]" 120 "writes reach B after A died" || lab_die "I/O did not move to B"
lab_result failover_s "$(lab_elapsed "$TK")"
lab_result failover_moved_to_b 1
wait_for "! bg_alive fio-failover" 600 "fio ends" || lab_die "fio still running"
stop_bg fio-failover 10; FRC=$?
FERR=$(awk -F';' '/^3;fio-/ { n++; s += $5 } END { if (n) print s; else print "none" }' "$LAB_LOGS/fio-failover.log")
lab_result failover_fio_error "$FERR"
[ "$FRC" = 0 ] && [ "$FERR" = 0 ] || lab_die "fio across the failover: exit $FRC, errors $FERR (logs/fio-failover.log)"
lab_result failover_fio_ok 1
stop_bg daemon-a 5 >/dev/null 2>&1

# --- A comes back ---------------------------------------------------------------------------------------------
[ -S "$SOCK_A" ] && lab_log "daemon A left its control socket behind (as a killed process does)"
TR=$(cut -d' ' -f1 /proc/uptime)
start_daemon daemon-a2 "$CFG_A" "$SOCK_A"
wait_for_log daemon-a2 ' ready: ' 300 || lab_die "daemon A did not start again"
lab_result a_restarted 1
grep -q "control: listening on $SOCK_A" "$LAB_LOGS/daemon-a2.log" && lab_result stale_socket_replaced 1
wait_for "path_is $CA optimized" 120 "the host reconnects to A, optimized" \
  || lab_die "A's path after the restart: $(ctrl_state "$CA") $(ana_of "$CA")"
lab_result a_path_back_s "$(lab_elapsed "$TR")"
lab_result a_path_back 1
io_goes_to io-back-on-a $MA $MB
lab_result io_back_on_a 1

# --- a reload flips the states ----------------------------------------------------------------------------------
config "$CFG_B" 2 "$B_ADDR" 100 199 optimized $MB
config "$CFG_A" 1 "$A_ADDR" 1 99 non-optimized $MA
kill -HUP "$(bg_pid daemon-b)"
wait_for_log daemon-b 'reload applied' 120 || lab_die "daemon B did not apply the reload"
kill -HUP "$(bg_pid daemon-a2)"
wait_for_log daemon-a2 'reload applied' 120 || lab_die "daemon A did not apply the reload"
wait_for "path_is $CB optimized && path_is $CA non-optimized" 60 "the host sees B optimized, A non-optimized" \
  || lab_die "after the reload: $CA $(ana_of "$CA"), $CB $(ana_of "$CB")"
lab_result reload_flipped 1
io_goes_to io-after-reload $MB $MA
lab_result reload_io_follows 1

# --- planned failover with nvmf-target ana set ------------------------------------------------------------------
run_step ana-set 300 "${NVMF[@]}" ana set --socket "$SOCK_B" 2 1 inaccessible || lab_die "nvmf-target ana set"
grep -q 'port 2 ANA group 1: optimized -> inaccessible' "$LAB_LOGS/ana-set.log" || lab_die "ana set printed no change"
lab_result ana_set_ok 1
wait_for "path_is $CB inaccessible && path_is $CA non-optimized" 60 "the host sees B inaccessible" \
  || lab_die "after ana set: $CA $(ana_of "$CA"), $CB $(ana_of "$CB")"
lab_result ana_set_flipped 1
io_goes_to io-after-ana-set $MA $MB
lab_result ana_set_io_follows 1

# --- the end --------------------------------------------------------------------------------------------------
run_step list-subsys-end 30 nvme list-subsys
lab_collect_logs
run_step nvme-disconnect 60 nvme disconnect -n "$NQN" || lab_die "nvme disconnect"
wait_for "! ctrl_at $A_ADDR && ! ctrl_at $B_ADDR" 60 "controllers removed" || lab_die "controllers still there"
stop_bg daemon-b 90; RB=$?
stop_bg daemon-a2 90; RA=$?
lab_result sigterm_a "$RA"
lab_result sigterm_b "$RB"
[ "$RA" = 0 ] && [ "$RB" = 0 ] || lab_die "daemon exit status after SIGTERM: A $RA, B $RB"
umount "$FS"; losetup -d "$LOOP"
dmesg > "$LAB_LOGS/dmesg-host.txt" 2>&1
if grep -Ei "duplicate cntlid|IDs don't match|ANA log page|invalid MNAN" "$LAB_LOGS/dmesg-host.txt" >&2; then
  lab_die "the host driver complained (dmesg-host.txt)"
fi
lab_result dmesg_clean 1
lab_result ana_wall_s "$(lab_elapsed "$T0")"
echo "daemon-ana-multipath: PASS"
