#!/bin/bash
# Our target (dev.nvmf.tests.lab.LabTargetMain: NvmeTarget + RAM namespace + RdmaTransport over the FFM
# provider) in the guest, driven by the Linux host (nvme-rdma) over Soft-RoCE:
#   nvme discover lists the subsystem; nvme connect; id-ctrl / id-ns / list show our identity; fio crc32c
#   verify (4 KiB random write+read, 128 KiB sequential); nvme disconnect leaves the daemon serving (a second
#   connect works); no host driver complaint in dmesg; after the daemon stops, no QP/MR/cm_id of it is left.
#
# Environment: LAB_TARGET_MAIN (default above), TARGET_PORT (4420), TARGET_ICD (in-capsule bytes, 8192),
# TARGET_REMOTE_INV (true). Results: target_ready, discover_ok, connect_ok, id_ctrl_ok, id_ns_ok, list_ok,
# verify_4k_ok, verify_128k_ok, disconnect_ok, reconnect_ok, dmesg_clean, target_stopped, leftover_qp,
# leftover_mr, leftover_cm_id, iops_randread_4k.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
NQN=nqn.2024-01.dev.nvmf:lab-java
PORT=${TARGET_PORT:-4420}
MAIN=${LAB_TARGET_MAIN:-dev.nvmf.tests.lab.LabTargetMain}

dmesg -C 2>/dev/null || true
start_java_bg target "$MAIN" "$LAB_TARGET_ADDR" "$PORT" "$NQN" 128 "${TARGET_ICD:-8192}" 1 "${TARGET_REMOTE_INV:-true}"
wait_for_log target '^LAB-TARGET: READY' 120 || lab_die "target did not start"
lab_result target_ready 1

run_step nvme-discover 60 nvme discover -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" || lab_die "nvme discover"
grep -q "subnqn: *$NQN" "$LAB_LOGS/nvme-discover.log" || lab_die "discovery log does not list $NQN"
grep -q "trtype: *rdma" "$LAB_LOGS/nvme-discover.log" || lab_die "discovery log entry is not rdma"
lab_result discover_ok 1

nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" || lab_die "nvme connect"
DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device for $NQN"
CTRL=$(nvme_ctrl_for "$NQN")
lab_result connect_ok 1
lab_result ns_dev "$DEV"
lab_result ctrl_queue_count "$(cat /sys/class/nvme/$CTRL/queue_count)"

run_step nvme-id-ctrl 30 nvme id-ctrl "/dev/$CTRL" || lab_die "nvme id-ctrl"
grep -Eq "^subnqn *: *$NQN" "$LAB_LOGS/nvme-id-ctrl.log" || lab_die "id-ctrl does not show our subnqn"
lab_result id_ctrl_ok 1
run_step nvme-id-ns 30 nvme id-ns "$DEV" || lab_die "nvme id-ns"
grep -Eq "^nsze *: *0x40000" "$LAB_LOGS/nvme-id-ns.log" || lab_die "id-ns nsze is not 128 MiB of 512 B blocks"
lab_result id_ns_ok 1
run_step nvme-list 30 nvme list || lab_die "nvme list"
grep -q "${DEV#/dev/}" "$LAB_LOGS/nvme-list.log" || lab_die "nvme list does not show $DEV"
lab_result list_ok 1

fio_run fio-verify-4k 240 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --size=8M \
  --iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 || lab_die "fio 4k verify failed"
[ "$FIO_ERROR" = 0 ] || lab_die "fio 4k verify reported error $FIO_ERROR"
lab_result verify_4k_ok 1
fio_run fio-verify-128k 240 --filename="$DEV" --ioengine=libaio --direct=1 --rw=write --bs=128k --size=16M \
  --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 || lab_die "fio 128k verify failed"
[ "$FIO_ERROR" = 0 ] || lab_die "fio 128k verify reported error $FIO_ERROR"
lab_result verify_128k_ok 1
fio_run fio-randread 120 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=32 \
  --time_based --runtime="${FIO_RUNTIME:-5}" --size=64M --group_reporting || lab_die "fio randread failed"
lab_result iops_randread_4k "$FIO_READ_IOPS"

lab_collect_logs
nvme_disconnect "$NQN" || lab_die "nvme disconnect"
bg_alive target || lab_die "target died on disconnect"
lab_result disconnect_ok 1

# The daemon keeps serving: connect again, a short verify, disconnect.
nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" || lab_die "second nvme connect"
DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device after reconnect"
fio_run fio-verify-again 120 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --size=1M \
  --iodepth=4 --verify=crc32c --do_verify=1 --verify_fatal=1 || lab_die "fio verify after reconnect failed"
nvme_disconnect "$NQN" || lab_die "second nvme disconnect"
lab_result reconnect_ok 1

dmesg > "$LAB_LOGS/dmesg-host.txt" 2>&1
if grep -Ei "bogus remote invalidation|keyed sgl|icdoff|nvme_rdma.*(error|failed)|Connect rejected" \
     "$LAB_LOGS/dmesg-host.txt"; then
  lab_die "host driver complained (see dmesg-host.txt)"
fi
lab_result dmesg_clean 1

# Resources of the daemon while it still runs with no queue open (every queue drained and released): no QP,
# only the listener's cm_id; the registered slabs stay (registered once per device, released at stop).
# rdma resource shows the creating thread's id (QPs and MRs come from our CM thread): match every thread of it.
TPID=$(bg_pid target)
TIDS=$(ls "/proc/$TPID/task" | paste -sd'|')
ours() { rdma resource show "$1" | grep -cE "pid ($TIDS) "; }
wait_for "[ \$(ours qp) = 0 ]" 30 "the daemon's QPs released" || true
{ for r in qp mr cm_id; do echo "# $r"; rdma resource show $r; done; } > "$LAB_LOGS/rdma-idle.txt" 2>&1
lab_result idle_qp "$(ours qp)"
lab_result idle_cm_id "$(ours cm_id)"
lab_result idle_mr "$(ours mr)"
stop_bg target 60
grep -q '^LAB-TARGET: STOPPED' "$LAB_LOGS/target.log" || lab_die "target did not stop cleanly"
grep -q '^LAB-TARGET: metrics.* open=0' "$LAB_LOGS/target.log" || lab_die "queues left open at stop"
lab_result target_stopped 1
{ for r in qp mr cm_id; do echo "# $r"; rdma resource show $r; done; } > "$LAB_LOGS/rdma-after.txt" 2>&1
lab_result leftover_qp "$(ours qp)"
lab_result leftover_mr "$(ours mr)"
lab_result leftover_cm_id "$(ours cm_id)"
echo "rdma-target-fio: PASS (4k randread: $FIO_READ_IOPS IOPS)"
