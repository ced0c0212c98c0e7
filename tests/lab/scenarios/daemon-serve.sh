#!/bin/bash
# The daemon exactly as systemd runs it (bin/nvmf-target serve --config FILE, Type=notify), in the guest, with
# the Linux host (nvme-rdma) over Soft-RoCE:
#   READY=1 arrives on NOTIFY_SOCKET (a datagram socket this scenario reads) only once the listener is up;
#   nvme discover / connect; fio crc32c verify; the Prometheus endpoint counts the I/O;
#   a namespace added to the YAML + SIGHUP (RELOADING=1, READY=1 again): the host sees it (AEN, ns-rescan,
#   nvme list-ns) while its queues keep working (a second verify on the first namespace, one on the new one);
#   SIGTERM during fio: the daemon drains and exits 0 (STOPPING=1), the host sees the controller go away;
#   no QP / cm_id of the daemon is left.
#
# Environment: NVMF_BUILD_DIR (the Maven output folder bin/nvmf-target looks in; default target). When that
# build has no packaged jar, the same main class runs from LAB_CLASSPATH with the launcher's JVM options.
# LAB_DAEMON_SRQ=true serves with transport.srq (a shared receive queue per poller on rxe0; default false).
# Results: launcher, daemon_ready, notify_ready, discover_ok, connect_ok, verify_ok, rxe_retransmits, rxe_out_of_seq,
# veth_rps, metrics_write_bytes,
# metrics_ok, reload_ok, notify_reloading, ns2_visible, verify_after_reload_ok, verify_ns2_ok,
# sigterm_exit, notify_stopping, host_saw_loss, daemon_log_drained, leftover_qp, leftover_cm_id.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
NQN=nqn.2024-01.dev.nvmf:lab-daemon
PORT=4420
METRICS=127.0.0.1:9464
CFG=$LAB_RUN/nvmf-target.yaml
NOTIFY=$LAB_RUN/notify.sock
NOTIFY_LOG=$LAB_LOGS/sd-notify.log
mkdir -p "$LAB_RUN" "$LAB_LOGS"

write_config() { # write_config NAMESPACES-YAML
  cat > "$CFG" <<YAML
subsystems:
  - nqn: $NQN
    allow_any_host: true
    namespaces:
$1
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
transport:
  srq: ${LAB_DAEMON_SRQ:-false}
metrics:
  enabled: true
  listen: $METRICS
logging:
  format: plain
YAML
}
NS1='      - nsid: 1
        ram_size: 128MiB'
NS2='      - nsid: 2
        ram_size: 64MiB'
write_config "$NS1"
cp "$CFG" "$LAB_LOGS/nvmf-target.yaml"

# systemd's side of sd_notify: a datagram socket; every message becomes one line of $NOTIFY_LOG.
start_bg notify-socket /usr/bin/python3 -u -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
out = open(sys.argv[2], "a", buffering=1)
while True:
    out.write(s.recv(4096).decode().replace("\n", " ") + "\n")
' "$NOTIFY" "$NOTIFY_LOG"
wait_for "[ -S $NOTIFY ]" 30 "notify socket bound" || lab_die "notify socket"

# The launcher, when that build is packaged and has the daemon runtime in it (not an older package); else the same
# main class from the class path (lib.sh: lab_nvmf_command).
lab_nvmf_command || lab_die "no java"
start_bg daemon env NOTIFY_SOCKET="$NOTIFY" "${LAB_NVMF[@]}" serve --config "$CFG"
wait_for "grep -q '^READY=1' $NOTIFY_LOG || ! bg_alive daemon" 120 "READY=1 from the daemon" 
grep -q '^READY=1' "$NOTIFY_LOG" || { tail -n 40 "$LAB_LOGS/daemon.log" >&2; lab_die "daemon did not report READY=1"; }
lab_result notify_ready 1
lab_result daemon_ready 1

run_step nvme-discover 60 nvme discover -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" || lab_die "nvme discover"
grep -q "subnqn: *$NQN" "$LAB_LOGS/nvme-discover.log" || lab_die "discovery log does not list $NQN"
lab_result discover_ok 1

# A short controller-loss timeout: when the daemon stops, the host gives up after 5 s instead of 10 min.
nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" --ctrl-loss-tmo=5 --reconnect-delay=1 || lab_die "nvme connect"
DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device for $NQN"
CTRL=$(nvme_ctrl_for "$NQN")
lab_result connect_ok 1
lab_result ns_dev "$DEV"

# rxe's retransmissions and PSN gaps during the verify, both ends (reported: README, "Host I/O stalls").
RETRY0=$(rxe_counter completer_retry_err)
OOS0=$(rxe_counter out_of_seq_request)
fio_run fio-verify 240 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --size=8M \
  --iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 || lab_die "fio verify failed"
[ "$FIO_ERROR" = 0 ] || lab_die "fio verify reported error $FIO_ERROR"
lab_result verify_ok 1
lab_result rxe_retransmits $(( $(rxe_counter completer_retry_err) - RETRY0 ))
lab_result rxe_out_of_seq $(( $(rxe_counter out_of_seq_request) - OOS0 ))
lab_result veth_rps "$(cat /sys/class/net/va/queues/rx-0/rps_cpus)"

curl -s "http://$METRICS/metrics" > "$LAB_LOGS/metrics-1.txt" || lab_die "metrics endpoint"
WB=$(awk -v nqn="$NQN" '/^nvmf_io_bytes_total\{/ && $0 ~ "subsystem=\"" nqn "\"" && /opcode="write"/ && /nsid="1"/ { print $NF }' "$LAB_LOGS/metrics-1.txt")
lab_result metrics_write_bytes "${WB:-none}"
awk -v w="${WB:-0}" 'BEGIN { exit !(w + 0 >= 8388608) }' || lab_die "metrics: write bytes $WB < the 8 MiB fio wrote"
grep -q '^nvmf_io_latency_seconds_bucket{.*opcode="read"' "$LAB_LOGS/metrics-1.txt" || lab_die "no read latency buckets"
lab_result metrics_ok 1
if [ "${LAB_DAEMON_SRQ:-false}" = true ]; then
  grep -q 'shared receive queue of' "$LAB_LOGS/daemon.log" \
    || lab_die "transport.srq: the daemon's log shows no shared receive queue"
  lab_result srq_in_use 1
fi

# Reload: namespace 2 appears in the YAML; SIGHUP.
write_config "$NS1
$NS2"
kill -HUP "$(bg_pid daemon)"
wait_for "grep -q 'reload applied' $LAB_LOGS/daemon.log || grep -q 'reload \(refused\|failed\)' $LAB_LOGS/daemon.log" 60 \
  "daemon applies the reload" || lab_die "reload not applied"
grep -q 'reload applied' "$LAB_LOGS/daemon.log" || lab_die "reload refused (see daemon.log)"
grep -q '^RELOADING=1' "$NOTIFY_LOG" && lab_result notify_reloading 1
lab_result reload_ok 1
# The host rescans on the namespace-changed AEN by itself; ns-rescan makes it certain.
run_step nvme-ns-rescan 30 nvme ns-rescan "/dev/$CTRL"
wait_for "nvme list-ns /dev/$CTRL 2>/dev/null | grep -Eq '0x0*2[[:space:]]*$'" 60 "nvme list-ns shows NSID 2" \
  || lab_die "NSID 2 not listed"
run_step nvme-list-ns 30 nvme list-ns "/dev/$CTRL"
DEV2=$(nvme_ns_dev_nsid_for "$NQN" 2 60) || lab_die "no block device for NSID 2"
run_step nvme-list-after-reload 30 nvme list
grep -q "${DEV2#/dev/}" "$LAB_LOGS/nvme-list-after-reload.log" || lab_die "nvme list does not show $DEV2"
lab_result ns2_visible 1
lab_result ns2_dev "$DEV2"
fio_run fio-verify-after-reload 120 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
  --size=2M --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 || lab_die "verify ns1 after reload"
lab_result verify_after_reload_ok 1
fio_run fio-verify-ns2 120 --filename="$DEV2" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
  --size=2M --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 || lab_die "verify ns2"
lab_result verify_ns2_ok 1

# Reads completed on every namespace, from the daemon's metrics.
read_count() {
  curl -s "http://$METRICS/metrics" | awk '/^nvmf_io_latency_seconds_count\{/ && /opcode="read"/ { s += $NF } END { printf "%d", s }'
}

# SIGTERM while fio runs: an orderly stop (drain), exit 0; the host loses the controller.
lab_collect_logs
start_bg fio-during-stop fio --name=during-stop --filename="$DEV" --ioengine=libaio --direct=1 --rw=randrw \
  --bs=4k --iodepth=16 --time_based --runtime=120 --size=32M
R0=$(read_count)
wait_for "[ \$(read_count) -gt $((R0 + 500)) ]" 60 "fio is doing I/O through the daemon" || lab_die "fio did not start"
DPID=$(bg_pid daemon)
lab_log "SIGTERM to the daemon (pid $DPID) during fio"
stop_bg daemon 60
RC=$?
lab_result sigterm_exit "$RC"
[ "$RC" = 0 ] || { tail -n 40 "$LAB_LOGS/daemon.log" >&2; lab_die "daemon exit status $RC after SIGTERM"; }
grep -q '^STOPPING=1' "$NOTIFY_LOG" && lab_result notify_stopping 1
grep -q 'stopped: every queue drained' "$LAB_LOGS/daemon.log" && lab_result daemon_log_drained 1
wait_for "[ \"\$(cat /sys/class/nvme/$CTRL/state 2>/dev/null || echo gone)\" != live ]" 60 "host sees the controller go away" \
  || lab_die "the host still sees a live controller"
lab_result host_saw_loss 1
wait_for "! bg_alive fio-during-stop" 90 "fio ends (controller lost)" || stop_bg fio-during-stop 10
nvme disconnect -n "$NQN" > /dev/null 2>&1 || true
{ for r in qp cm_id; do echo "# $r"; rdma resource show $r; done; } > "$LAB_LOGS/rdma-after.txt" 2>&1
lab_result leftover_qp "$(rdma resource show qp | grep -c java)"
lab_result leftover_cm_id "$(rdma resource show cm_id | grep -c java)"
stop_bg notify-socket 5
echo "daemon-serve: PASS"
