#!/bin/bash
# By hand, not in the suite: rxe's counters (`rdma statistic`) and the network's around one fio job against the
# daemon (once per busy_poll value) and then the kernel target, in one boot. It reproduces the table of
# tests/lab/README.md, "Host I/O stalls": run it with --env LAB_RPS=0 for the old, reordering veth pair.
#   flock /tmp/nvmf-lab.lock tests/lab/lab.sh --timeout 1500 [--env LAB_RPS=0] rxe-order
# Environment: ORDER_RUNTIME (s per job, default 120), ORDER_BUSY (busy_poll values, default "50us 0"),
# ORDER_KERNEL (0 skips the kernel target), NVMF_BUILD_DIR (as daemon-serve).
# Results: <name>_fio_rc, <name>_read_iops, <name>_not_free (host dmesg lines), <name>_timeouts, veth_rps; for each
# job logs/snap-<name>-{before,after}.txt hold the counters of rxe0 and rxe1, softnet_stat and `ip -s link`.
# The job is mixed random read/write of 4-128 KiB at depth 8 without verify (overlapping writes of mixed sizes
# make fio's verify report false mismatches on any target).
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
NQN=nqn.2024-01.dev.nvmf:rxe-order
PORT=4420
RUNTIME=${ORDER_RUNTIME:-120}
CFG=$LAB_RUN/nvmf-target.yaml
mkdir -p "$LAB_RUN" "$LAB_LOGS"
lab_result veth_rps "$(cat /sys/class/net/va/queues/rx-0/rps_cpus)"

snap() { # snap NAME
  { echo "## $(cut -d' ' -f1 /proc/uptime)"; rdma statistic show link rxe0/1; rdma statistic show link rxe1/1
    echo "# softnet"; cat /proc/net/softnet_stat; echo "# netdev"; ip -s link show va; ip -s link show vb
  } > "$LAB_LOGS/snap-$1.txt" 2>&1
}
job() { # job NAME DEV
  dmesg -c > /dev/null
  snap "$1-before"
  fio_run "fio-$1" $((RUNTIME + 200)) --filename="$2" --ioengine=libaio --direct=1 --rw=randrw --bsrange=4k-128k \
    --iodepth=8 --time_based --runtime="$RUNTIME" --size=64M --randrepeat=0
  lab_result "$1_fio_rc" $?
  lab_result "$1_read_iops" "$FIO_READ_IOPS"
  snap "$1-after"
  dmesg > "$LAB_LOGS/dmesg-$1.txt"
  lab_result "$1_not_free" "$(grep -c 'not free' "$LAB_LOGS/dmesg-$1.txt")"
  lab_result "$1_timeouts" "$(grep -c 'timeout' "$LAB_LOGS/dmesg-$1.txt")"
}
daemon_job() { # daemon_job NAME BUSY_POLL
  cat > "$CFG" <<YAML
subsystems:
  - nqn: $NQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: 128MiB
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
transport:
  busy_poll: $2
logging:
  format: plain
YAML
  start_bg daemon "${LAB_NVMF[@]}" serve --config "$CFG"
  wait_for "grep -q 'ready:' $LAB_LOGS/daemon.log || ! bg_alive daemon" 240 "daemon ready" || lab_die "daemon not ready"
  nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" || lab_die "connect"
  DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device"
  job "$1" "$DEV"
  nvme disconnect -n "$NQN" > /dev/null 2>&1
  stop_bg daemon 60
  cp "$LAB_LOGS/daemon.log" "$LAB_LOGS/daemon-$1.log"
}

lab_nvmf_command || lab_die "no java"
for b in ${ORDER_BUSY:-50us 0}; do daemon_job "daemon_bp${b}" "$b"; done
if [ "${ORDER_KERNEL:-1}" = 1 ]; then
  nullblk_create 1 || lab_die "null_blk"
  ktarget_subsys "$NQN" /dev/nullb0 || lab_die "nvmet subsystem"
  ktarget_port 1 "$LAB_TARGET_ADDR" "$PORT" "$NQN" || lab_die "nvmet port"
  nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" || lab_die "connect to the kernel target"
  DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device of the kernel target"
  job kernel "$DEV"
  nvme disconnect -n "$NQN" > /dev/null 2>&1
  ktarget_teardown
fi
echo "rxe-order: DONE"
