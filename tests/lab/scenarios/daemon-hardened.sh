#!/bin/bash
# The daemon with the privileges systemd/nvmf-target.service gives it, applied by hand: the guest has no systemd
# (boot.sh is PID 1), so setpriv and prlimit set what the unit's settings set:
#   User=/Group= (DynamicUser=)  -> --reuid/--regid 61234, a uid of systemd's dynamic range (61184-65519) that no
#                                   file belongs to
#   SupplementaryGroups=disk     -> --groups disk
#   CapabilityBoundingSet= and AmbientCapabilities= empty -> --bounding-set=-all --inh-caps=-all --ambient-caps=-all
#   NoNewPrivileges=yes          -> --no-new-privs
#   LimitMEMLOCK=infinity        -> prlimit --memlock=unlimited:unlimited
#   ReadWritePaths=/StateDirectory= -> the file namespace's directory belongs to that uid, nothing else does
# (the mount-namespace settings, ProtectSystem= and friends, have no setpriv equivalent and are not reproduced).
# The unit test SystemdUnitTest checks that these options and the unit's settings agree.
#
# Then, as that user with no capability: READY, the Linux host connects, a short fio crc32c verify on a RAM, a file
# and a block (loop device) namespace; /proc shows the process's uid, groups, capabilities (all zero), no_new_privs,
# the locked-memory limit and the memory it pinned (more than the default limit, so the limit is what made it
# work); the disk group is what opens the block device (without it the same user cannot); SIGTERM stops it, exit 0.
#
# Environment: NVMF_BUILD_DIR (bin/nvmf-target's build folder; default target). Without a packaged build the main
# class runs from LAB_CLASSPATH; the jars of it that sit under /root (mode 0700 on the build machines: the local
# Maven repository) are copied where the service user can read them.
# Results: launcher, daemon_ready, proc_uid, proc_gid, proc_groups_disk, cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb,
# no_new_privs, memlock_limit, pinned_kib, default_memlock_kib, guest_kernel, disk_group_needed, uverbs_mode, rdma_cm_mode,
# direct_io_refused_logged, connect_ok, verify_ram_ok, verify_file_ok, verify_block_ok, sigterm_exit, leftover_qp,
# leftover_cm_id, hardened_wall_s.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
NQN=nqn.2024-01.dev.nvmf:lab-hardened
PORT=4420
SVC_UID=61234
SVC_GID=61234
DISK_GID=$(getent group disk | cut -d: -f3)
CFG=$LAB_RUN/hardened.yaml
STATE=$LAB_RUN/nvmf-state            # what StateDirectory= gives the unit: owned by the service user
FILE_NS=$STATE/ns2.img
LOOP_IMG=$LAB_RUN/loop-backing.img
mkdir -p "$LAB_RUN" "$LAB_LOGS" "$STATE"
[ -n "$DISK_GID" ] || lab_die "no disk group in /etc/group"

# As the service user, with exactly the unit's privileges (see the header).
as_service() {
  prlimit --memlock=unlimited:unlimited -- \
    setpriv --reuid="$SVC_UID" --regid="$SVC_GID" --groups="$DISK_GID" --inh-caps=-all --ambient-caps=-all \
      --bounding-set=-all --no-new-privs -- "$@"
}
# The same user without the disk group, for the control below.
as_service_without_disk() {
  setpriv --reuid="$SVC_UID" --regid="$SVC_GID" --clear-groups --inh-caps=-all --ambient-caps=-all \
    --bounding-set=-all --no-new-privs -- "$@"
}

# --- the namespaces' media -------------------------------------------------------------------------------------
truncate -s 32M "$FILE_NS" || lab_die "cannot create $FILE_NS"
chown -R "$SVC_UID:$SVC_GID" "$STATE" && chmod 0700 "$STATE" || lab_die "cannot give $STATE to the service user"
modprobe loop 2>/dev/null
truncate -s 32M "$LOOP_IMG" || lab_die "cannot create $LOOP_IMG"
LOOP=$(losetup -f --show "$LOOP_IMG") || lab_die "losetup"
# What udev does for every block device (50-udev-default.rules: GROUP="disk", MODE 0660); the guest runs no udev.
chgrp disk "$LOOP" && chmod 0660 "$LOOP" || lab_die "cannot set the group of $LOOP"
lab_result loop_dev "$LOOP"
lab_result uverbs_mode "$(stat -c %a /dev/infiniband/uverbs0 2>/dev/null || echo none)"
lab_result rdma_cm_mode "$(stat -c %a /dev/infiniband/rdma_cm 2>/dev/null || echo none)"
# The control: the service user reads the device with the disk group, and cannot without it.
as_service dd if="$LOOP" of=/dev/null bs=4096 count=1 iflag=direct 2> "$LAB_LOGS/dd-with-disk.log" \
  || lab_die "the service user cannot read $LOOP with the disk group"
if as_service_without_disk dd if="$LOOP" of=/dev/null bs=4096 count=1 2> "$LAB_LOGS/dd-without-disk.log"; then
  lab_die "the service user reads $LOOP without the disk group: the control proves nothing"
fi
lab_result disk_group_needed 1
lab_result default_memlock_kib "$(ulimit -l)"
lab_result guest_kernel "$(uname -r)"

cat > "$CFG" <<YAML
subsystems:
  - nqn: $NQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: 64MiB
      - nsid: 2
        file: $FILE_NS
      - nsid: 3
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
chmod 0644 "$CFG"
cp "$CFG" "$LAB_LOGS/hardened.yaml"

# --- the daemon, as the service user -------------------------------------------------------------------------------
lab_nvmf_command || lab_die "no java"
NVMF=("${LAB_NVMF[@]}")
if [ "$LAB_NVMF_LAUNCHER" = classpath ]; then
  # The service user cannot read root's Maven repository: its entries are copied where it can.
  CPDIR=$LAB_RUN/service-classpath
  mkdir -p "$CPDIR"
  CP=""
  IFS=: read -r -a ENTRIES <<< "$LAB_CLASSPATH"
  for e in "${ENTRIES[@]}"; do
    case $e in
      /root/*.jar) cp "$e" "$CPDIR/" && e=$CPDIR/$(basename "$e") ;;
      /root/*) cp -r "$e" "$CPDIR/$(echo "$e" | tr / _)" && e=$CPDIR/$(echo "$e" | tr / _) ;;
    esac
    CP=$CP${CP:+:}$e
  done
  chmod -R a+rX "$CPDIR"
  NVMF=("$LAB_JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:-UsePerfData -cp "$CP"
    dev.nvmf.target.cli.Main)
fi
start_bg daemon env HOME="$STATE" prlimit --memlock=unlimited:unlimited -- \
  setpriv --reuid="$SVC_UID" --regid="$SVC_GID" --groups="$DISK_GID" --inh-caps=-all --ambient-caps=-all \
    --bounding-set=-all --no-new-privs -- "${NVMF[@]}" serve --config "$CFG"
wait_for_log daemon ' ready: ' 180 || lab_die "the daemon did not become ready as uid $SVC_UID"
lab_result daemon_ready 1

# The java process (the launcher execs it; find it by its owner rather than trusting the pid chain).
JPID=$(pgrep -u "$SVC_UID" -f 'dev.nvmf.target.cli.Main' | head -n1)
[ -n "$JPID" ] || lab_die "no java process of uid $SVC_UID"
cp "/proc/$JPID/status" "$LAB_LOGS/daemon-proc-status.txt"
cp "/proc/$JPID/limits" "$LAB_LOGS/daemon-proc-limits.txt"
status_field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "/proc/$JPID/status"; }
lab_result proc_uid "$(status_field Uid | tr -s '\t ' ',')"
lab_result proc_gid "$(status_field Gid | tr -s '\t ' ',')"
case " $(status_field Groups) " in *" $DISK_GID "*) lab_result proc_groups_disk 1 ;; *) lab_result proc_groups_disk 0 ;; esac
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
  lab_result "$(echo "$c" | sed 's/Cap/cap_/; s/Inh/inh/; s/Prm/prm/; s/Eff/eff/; s/Bnd/bnd/; s/Amb/amb/')" "$(status_field $c)"
done
lab_result no_new_privs "$(status_field NoNewPrivs)"
lab_result memlock_limit "$(awk '/^Max locked memory/ { print $4 ":" $5 }' "/proc/$JPID/limits")"
grep -q 'refuses O_DIRECT' "$LAB_LOGS/daemon.log" && lab_result direct_io_refused_logged 1

# --- the Linux host --------------------------------------------------------------------------------------------
nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" --ctrl-loss-tmo=5 --reconnect-delay=1 || lab_die "nvme connect"
CTRL=$(nvme_ctrl_for "$NQN") || lab_die "no controller for $NQN"
lab_result connect_ok 1
for spec in 1:ram 2:file 3:block; do
  nsid=${spec%%:*}
  kind=${spec#*:}
  dev=$(nvme_ns_dev_nsid_for "$NQN" "$nsid" 60) || lab_die "no device for NSID $nsid"
  fio_run "fio-verify-$kind" 180 --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
    --size=4M --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 \
    || lab_die "fio verify on the $kind namespace ($dev)"
  [ "$FIO_ERROR" = 0 ] || lab_die "fio verify on the $kind namespace reported error $FIO_ERROR"
  lab_result "verify_${kind}_ok" 1
done
# Registered memory the daemon pinned, now that a queue pair and its buffers exist (VmPin, /proc/PID/status).
lab_result pinned_kib "$(status_field VmPin | awk '{ print $1 }')"
cp "/proc/$JPID/status" "$LAB_LOGS/daemon-proc-status-after-io.txt"

nvme_disconnect "$NQN" || lab_die "nvme disconnect"
stop_bg daemon 60
RC=$?
lab_result sigterm_exit "$RC"
[ "$RC" = 0 ] || { tail -n 40 "$LAB_LOGS/daemon.log" >&2; lab_die "daemon exit status $RC after SIGTERM"; }
losetup -d "$LOOP" 2>/dev/null
lab_result leftover_qp "$(rdma resource show qp | grep -c java)"
lab_result leftover_cm_id "$(rdma resource show cm_id | grep -c java)"
lab_result hardened_wall_s "$(lab_elapsed "$T0")"
echo "daemon-hardened: PASS"
