#!/bin/bash
# Reference baseline: the Linux kernel NVMe-oF target (nvmet-rdma) on a memory-backed null_blk device, the
# Linux host (nvme-rdma) connected to it over Soft-RoCE. Proves the lab and the initiator path our target
# will face: discover, connect, data integrity (fio verify), 4 KiB random-read IOPS at QD32 (a number to
# compare with, within one boot; emulation makes it ~1000x slower than hardware), disconnect.
#
# Results: discover_ok, connect_ok, ns_dev, ctrl_address, verify_ok, iops_randread_4k_qd32, disconnect_ok.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
NQN=nqn.2024-01.dev.nvmf:lab-ref
PORT=${KTARGET_PORT:-4420}
RUNTIME=${FIO_RUNTIME:-10}

nullblk_create 1 || lab_die "null_blk"
ktarget_subsys "$NQN" /dev/nullb0 || lab_die "nvmet subsystem"
ktarget_port 1 "$LAB_TARGET_ADDR" "$PORT" "$NQN" || lab_die "nvmet port"

# The discovery log lists our subsystem on the RDMA port.
run_step nvme-discover 60 nvme discover -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" || lab_die "nvme discover"
grep -q "subnqn: *$NQN" "$LAB_LOGS/nvme-discover.log" || lab_die "discovery log does not list $NQN"
grep -q "trtype: *rdma" "$LAB_LOGS/nvme-discover.log" || lab_die "discovery log entry is not rdma"
lab_result discover_ok 1

nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" || lab_die "nvme connect"
DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device for $NQN"
lab_result connect_ok 1
lab_result ns_dev "$DEV"
CTRL=$(nvme_ctrl_for "$NQN")
lab_result ctrl_queue_count "$(cat /sys/class/nvme/$CTRL/queue_count)"
# host_traddr=10.77.0.2: the host side is rxe1, the target rxe0; the traffic crosses the veth pair.
lab_result ctrl_address "$(cat /sys/class/nvme/$CTRL/address)"
run_step nvme-id-ctrl 30 nvme id-ctrl "/dev/$CTRL" > /dev/null || lab_die "nvme id-ctrl"

# Data integrity: write 16 MiB of random 4 KiB blocks with crc32c headers, read every one back and check.
fio_run fio-verify 180 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --size=16M \
  --iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 || lab_die "fio verify failed"
[ "$FIO_ERROR" = 0 ] || lab_die "fio verify reported error $FIO_ERROR"
grep -q 'verify:.*bad' "$LAB_LOGS/fio-verify.log" && lab_die "fio verify found bad blocks"
lab_result verify_ok 1

# Throughput reference: 4 KiB random reads, queue depth 32, time based.
fio_run fio-randread 120 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=32 \
  --time_based --runtime="$RUNTIME" --size=1G --group_reporting || lab_die "fio randread failed"
[ "$FIO_ERROR" = 0 ] || lab_die "fio randread reported error $FIO_ERROR"
lab_result iops_randread_4k_qd32 "$FIO_READ_IOPS"

lab_collect_logs
nvme_disconnect "$NQN" || lab_die "nvme disconnect"
lab_result disconnect_ok 1
ktarget_teardown
echo "kernel-target-fio: PASS (4k randread QD32: $FIO_READ_IOPS IOPS)"
