#!/bin/bash
# Namespace resize on reload, with the Linux host: the daemon (bin/nvmf-target serve) serves a file namespace
# (NSID 1, the whole file) and a block-device namespace (NSID 2, a loop device); the host connects; the file and
# the loop device's backing file grow (truncate, losetup -c) with the YAML unchanged; SIGHUP. The daemon logs the
# new sizes, the host gets Namespace Attribute Changed and its block devices show the new sizes by themselves (no
# ns-rescan), the data written before is intact, and I/O beyond the old end works.
#
# Environment: NVMF_BUILD_DIR (the Maven output folder bin/nvmf-target looks in; default target). When that build
# has no packaged jar, the same main class runs from LAB_CLASSPATH.
# Results: launcher, connect_ok, file_size_before, dev_size_before, reload_ok, daemon_saw_file, daemon_saw_device,
# file_resized_on_host, device_resized_on_host, data_intact, io_beyond_old_end_ok, sigterm_exit.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
NQN=nqn.2024-01.dev.nvmf:lab-resize
PORT=4420
CFG=$LAB_RUN/nvmf-target.yaml
mkdir -p "$LAB_RUN" "$LAB_LOGS"
MIB=1048576

FILE=$LAB_RUN/ns1.img
BACKING=$LAB_RUN/ns2-backing.img
truncate -s 16M "$FILE" && truncate -s 16M "$BACKING" || lab_die "cannot create the image files"
modprobe loop 2>/dev/null
LOOP=$(losetup -f --show "$BACKING") || lab_die "losetup"
lab_result loop_dev "$LOOP"

cat > "$CFG" <<YAML
subsystems:
  - nqn: $NQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        file: $FILE
        buffered_io: true
      - nsid: 2
        device: $LOOP
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
metrics:
  enabled: false
logging:
  format: plain
YAML
cp "$CFG" "$LAB_LOGS/nvmf-target.yaml"

# bin/nvmf-target when the build is packaged (no JVM start to find out), else the same main class.
lab_nvmf_command || lab_die "no java"
start_bg daemon "${LAB_NVMF[@]}" serve --config "$CFG"
wait_for "grep -q 'ready: ' $LAB_LOGS/daemon.log || ! bg_alive daemon" 180 "the daemon is ready" \
  || lab_die "daemon not ready"
grep -q 'ready: ' "$LAB_LOGS/daemon.log" || { tail -n 40 "$LAB_LOGS/daemon.log" >&2; lab_die "daemon exited"; }

nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" --ctrl-loss-tmo=5 --reconnect-delay=1 || lab_die "nvme connect"
wait_for "nvme_ns_dev_nsid $NQN 1 && nvme_ns_dev_nsid $NQN 2" 90 "block devices of NSID 1 and 2" || lab_die "no namespace devices"
DEV1=$(nvme_ns_dev_nsid "$NQN" 1)
DEV2=$(nvme_ns_dev_nsid "$NQN" 2)
lab_result connect_ok 1
lab_result file_size_before "$(blockdev --getsize64 "$DEV1")"
lab_result dev_size_before "$(blockdev --getsize64 "$DEV2")"
[ "$(blockdev --getsize64 "$DEV1")" = $((16 * MIB)) ] || lab_die "NSID 1 is not 16 MiB on the host"
[ "$(blockdev --getsize64 "$DEV2")" = $((16 * MIB)) ] || lab_die "NSID 2 is not 16 MiB on the host"

# Data near the old end of both namespaces, to check after the resize.
for d in "$DEV1" "$DEV2"; do
  run_step "write-$(basename "$d")" 60 dd if=/dev/urandom of="$LAB_RUN/$(basename "$d").pattern" bs=4096 count=16 \
    || lab_die "pattern"
  run_step "dd-$(basename "$d")" 60 dd if="$LAB_RUN/$(basename "$d").pattern" of="$d" bs=4096 seek=$((16 * 256 - 16)) \
    oflag=direct conv=fsync || lab_die "write near the old end of $d"
done

# The operator grows the media; the YAML stays the same; systemctl reload = SIGHUP.
truncate -s 48M "$FILE" && truncate -s 32M "$BACKING" && losetup -c "$LOOP" || lab_die "grow the media"
[ "$(blockdev --getsize64 "$LOOP")" = $((32 * MIB)) ] || lab_die "$LOOP did not grow"
kill -HUP "$(bg_pid daemon)"
wait_for "grep -q 'reload: no changes' $LAB_LOGS/daemon.log" 60 "the daemon handles the reload" \
  || lab_die "reload not handled"
lab_result reload_ok 1
wait_for "grep -q 'namespace 1: .* is now $((48 * MIB)) bytes' $LAB_LOGS/daemon.log" 30 "the daemon logs the file's size" \
  && lab_result daemon_saw_file 1
wait_for "grep -q 'namespace 2: .* is now $((32 * MIB)) bytes' $LAB_LOGS/daemon.log" 30 "the daemon logs the device's size" \
  && lab_result daemon_saw_device 1
# The host hears of it (Namespace Attribute Changed) and revalidates by itself: no ns-rescan here.
wait_for "[ \$(blockdev --getsize64 $DEV1) = $((48 * MIB)) ]" 120 "the host sees NSID 1 at 48 MiB" \
  && lab_result file_resized_on_host 1
wait_for "[ \$(blockdev --getsize64 $DEV2) = $((32 * MIB)) ]" 120 "the host sees NSID 2 at 32 MiB" \
  && lab_result device_resized_on_host 1
dmesg | grep -i 'nvme' | tail -n 20 > "$LAB_LOGS/host-nvme-dmesg.txt"

intact=1
for d in "$DEV1" "$DEV2"; do
  run_step "read-$(basename "$d")" 60 dd if="$d" of="$LAB_RUN/$(basename "$d").back" bs=4096 skip=$((16 * 256 - 16)) \
    count=16 iflag=direct || intact=0
  cmp "$LAB_RUN/$(basename "$d").pattern" "$LAB_RUN/$(basename "$d").back" || intact=0
done
[ $intact = 1 ] && lab_result data_intact 1
# I/O beyond the old end of both.
fio_run fio-beyond 120 --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=8 \
  --verify=crc32c --do_verify=1 --verify_fatal=1 --offset=$((16 * MIB)) --size=$((8 * MIB)) \
  --filename="$DEV1:$DEV2" && [ "$FIO_ERROR" = 0 ] && lab_result io_beyond_old_end_ok 1

nvme disconnect -n "$NQN" > /dev/null 2>&1 || true
stop_bg daemon 60
lab_result sigterm_exit "$?"
losetup -d "$LOOP" || true
