#!/bin/bash
# The daemon's life with the Linux host connected: killed, restarted, connected and disconnected many times, stopped.
# One boot, three parts; a part that fails records why (PART_failed=REASON) and the next part still runs:
#   sigkill  SIGKILL of the daemon while four writers write to a file namespace (a file on ext4, opened O_DIRECT):
#            two write with Force Unit Access (O_DSYNC), two write plainly and Flush (fsync) after every 8 writes;
#            each logs a block only once the device acknowledged it (the FUA write, or the Flush after it). The host's
#            I/O fails after fast_io_fail_tmo, the writers stop; the daemon is restarted with the same configuration,
#            the host reconnects by itself, and every logged block reads back exactly as written
#            (tests/lab/guest/ackwriter.py; a block never written, checked the same way, is reported: the check can
#            fail);
#   cycles   LIFE_CYCLES (100) connect/disconnect cycles of the admin and I/O queues (nvme connect, a 4 KiB read
#            through an I/O queue, nvme disconnect) after LIFE_WARM_CYCLES (5) to warm up, against the restarted
#            daemon running with -XX:NativeMemoryTracking=summary and a fixed, pre-touched heap (-Xms = -Xmx,
#            AlwaysPreTouch: heap pages are resident from the start, so RSS growth is native memory). No GC is forced.
#            Held: the daemon's QPs, CQs, MRs, PDs and cm_ids as before, no queue open, every accepted queue released,
#            and native memory flat: NMT "Other" (FFM arenas, Unsafe) at most LIFE_OTHER_TOL_KB (1024) KiB more, NMT's
#            total committed at most LIFE_NMT_TOL_KB (8192) KiB more (JIT code and metaspace still grow a little), RSS
#            at most LIFE_RSS_TOL_KB (16384) KiB more;
#   sigterm  SIGTERM during fio: the drain finishes ("stopped: every queue drained"), the exit status is 0, and once
#            the host has disconnected nothing is left in `rdma resource show` beyond what was there before the daemon
#            first started.
#
# Environment: NVMF_BUILD_DIR, LIFE_PARTS (default "sigkill cycles sigterm"), LIFE_CYCLES, LIFE_WARM_CYCLES,
# LIFE_OTHER_TOL_KB, LIFE_NMT_TOL_KB, LIFE_RSS_TOL_KB.
# Results (1 = held): PART_ok or PART_failed=REASON, PART_wall_s, and
#   sigkill: file_direct, acked_fua, acked_flush, acked_total, writers_failed_fast, killed_while_writing,
#     restart_ready_s, reconnect_s (daemon ready to host live), checked, mismatched, check_detects_missing;
#   cycles: cycles_done, cycle_mean_s, io_queues, counts_before/after, queues_accepted, queues_released, nmt_before,
#     nmt_after, nmt_total_delta_kb, nmt_other_delta_kb, rss_before_kb, rss_after_kb, rss_delta_kb,
#     heap_used_before_kb, heap_used_after_kb, cycles_table (the samples: logs/cycles-table.txt);
#   sigterm: sigterm_exit, sigterm_exit_s, sigterm_drained, sigterm_counts_before, sys_counts_before/after.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
NQN=nqn.2024-01.dev.nvmf:lab-lifecycle
PORT=4420
NVMF_METRICS=127.0.0.1:9464
HOST_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000002a01
HOST=nqn.2014-08.org.nvmexpress:uuid:$HOST_ID
PARTS=${LIFE_PARTS:-sigkill cycles sigterm}
CYCLES=${LIFE_CYCLES:-100}
WARM=${LIFE_WARM_CYCLES:-5}
OTHER_TOL=${LIFE_OTHER_TOL_KB:-1024}
NMT_TOL=${LIFE_NMT_TOL_KB:-8192}
RSS_TOL=${LIFE_RSS_TOL_KB:-16384}
NMT_OPTS="-XX:NativeMemoryTracking=summary -Xms256m -Xmx256m -XX:+AlwaysPreTouch"
CFG=$LAB_RUN/lifecycle.yaml
FS=$LAB_RUN/fs
NS_FILE=$FS/ns1.img
ACK=$LAB_REPO/tests/lab/guest/ackwriter.py
ACKDIR=$LAB_RUN/ack
mkdir -p "$LAB_RUN" "$LAB_LOGS" "$FS" "$ACKDIR"
dmesg -C 2>/dev/null || true

ctrl() { nvme_ctrl_of "$NQN" "$HOST"; }
host_live() { local c; c=$(ctrl) && [ "$(nvme_ctrl_state "$c")" = live ] && nvme_ns_dev "$NQN" > /dev/null; }
queues_open() { nvmf_metric '^nvmf_rdma_queues_open'; }
connect() {
  run_step connect 60 nvme connect -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" -n "$NQN" -w "$LAB_HOST_ADDR" \
    -q "$HOST" -I "$HOST_ID" --reconnect-delay=1 --ctrl-loss-tmo=600 "$@"
}
sys_counts() { local r out=""; for r in qp cq mr pd cm_id; do out="$out${out:+ }$r=$(rdma_all_count $r)"; done; echo "$out"; }
# start_daemon NAME JVM-OPTIONS: the daemon (log logs/NAME.log), ready.
start_daemon() {
  lab_nvmf_command "$2" || return 1
  start_bg "$1" "${LAB_NVMF[@]}" serve --config "$CFG"
  wait_for_log "$1" ' ready: ' 180
}
part_cleanup() {
  local w
  for w in "$ACKDIR"/*.pid; do [ -e "$w" ] && { stop_bg "$(basename "$w" .pid)" 5; rm -f "$w"; }; done
  bg_alive fio-stop && stop_bg fio-stop 5
  timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1
  # The parts after sigkill run against the restarted daemon (with NMT): start it if sigkill failed before that.
  if [ "$1" = sigkill ] && ! bg_alive daemon2; then
    bg_alive daemon && stop_bg daemon 60
    start_daemon daemon2 "$NMT_OPTS" || lab_log "the daemon with NMT did not start"
  fi
  return 0
}
part_precheck() {
  case $1 in
    sigkill) bg_alive daemon || { echo "the daemon is not running"; return 1; } ;;
    *) bg_alive daemon2 || { echo "the restarted daemon is not running"; return 1; } ;;
  esac
}

# --- the file namespace: a file on ext4 (O_DIRECT works there; tmpfs refuses it on 6.1) ----------------------
SYS_BASE=$(sys_counts)
lab_result sys_counts_before "$SYS_BASE"
modprobe loop 2>/dev/null
truncate -s 160M "$LAB_RUN/fs.img" && mkfs.ext4 -q -F "$LAB_RUN/fs.img" > "$LAB_LOGS/mkfs.log" 2>&1 \
  && mount -o loop "$LAB_RUN/fs.img" "$FS" || lab_die "cannot make the ext4 file system for the file namespace"
truncate -s 64M "$NS_FILE" || lab_die "cannot create $NS_FILE"
cat > "$CFG" <<YAML
subsystems:
  - nqn: $NQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        file: $NS_FILE
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
metrics:
  enabled: true
  listen: $NVMF_METRICS
logging:
  format: plain
YAML
cp "$CFG" "$LAB_LOGS/lifecycle.yaml"
start_daemon daemon "" || lab_die "daemon did not become ready"
lab_result daemon_ready 1
if grep -qi 'buffered' "$LAB_LOGS/daemon.log"; then lab_result file_direct 0; else lab_result file_direct 1; fi

# --- part: sigkill ---------------------------------------------------------------------------------------------
WRITERS="fua0:fua:0 fua1:fua:2048 flush0:flush:4096 flush1:flush:6144"   # name:mode:first block; 2048 blocks each
acked() { cat "$ACKDIR"/*.log 2>/dev/null | grep -c .; }
acked_of() { cat "$ACKDIR"/$1*.log 2>/dev/null | grep -c .; }
writers_alive() { local w n=0; for w in $WRITERS; do bg_alive "w-${w%%:*}" && n=$((n + 1)); done; echo $n; }
part_sigkill() {
  local dev c w name mode first t dpid rc
  connect || { lab_part_fail sigkill "nvme connect"; return; }
  wait_for host_live 60 "host live" || { lab_part_fail sigkill "host not live"; return; }
  dev=$(nvme_ns_dev "$NQN"); c=$(ctrl)
  # Pending I/O fails 3 s after the controller starts reconnecting (the controller itself keeps reconnecting), so
  # the writers stop at the kill instead of waiting for the restart. (nvme-cli 2.3 has no option for it.)
  echo 3 > "/sys/class/nvme/$c/fast_io_fail_tmo" || { lab_part_fail sigkill "cannot set fast_io_fail_tmo"; return; }
  for w in $WRITERS; do
    IFS=: read -r name mode first <<< "$w"
    start_bg "w-$name" python3 "$ACK" write "$dev" "$ACKDIR/$name.log" --first "$first" --count 2048 --mode "$mode"
    touch "$ACKDIR/w-$name.pid"
  done
  wait_for "[ \$(acked_of fua) -ge 64 ] && [ \$(acked_of flush) -ge 64 ]" 180 "the writers' acknowledged blocks" \
    || { lab_part_fail sigkill "the writers did not get 64 FUA and 64 flushed blocks acknowledged"; return; }
  [ "$(writers_alive)" = 4 ] || { lab_part_fail sigkill "a writer ended before the kill"; return; }
  dpid=$(bg_pid daemon)
  lab_log "SIGKILL to the daemon (pid $dpid) with $(acked) blocks acknowledged"
  kill -KILL "$dpid"
  t=$(cut -d' ' -f1 /proc/uptime)
  wait_for "! kill -0 $dpid" 30 "the daemon is gone" || { lab_part_fail sigkill "the daemon survived SIGKILL"; return; }
  stop_bg daemon 5
  lab_result killed_while_writing 1
  # The writers end with an I/O error once fast_io_fail_tmo has passed.
  if wait_for "[ \$(writers_alive) = 0 ]" 120 "the writers stop on I/O errors"; then
    lab_result writers_failed_fast 4
  else
    lab_result writers_failed_fast "$((4 - $(writers_alive)))"
  fi
  lab_result acked_fua "$(acked_of fua)"
  lab_result acked_flush "$(acked_of flush)"
  lab_result acked_total "$(acked)"
  for w in $WRITERS; do cp "$ACKDIR/${w%%:*}.log" "$LAB_LOGS/ack-${w%%:*}.txt"; done
  t=$(cut -d' ' -f1 /proc/uptime)
  start_daemon daemon2 "$NMT_OPTS" || { lab_part_fail sigkill "the daemon did not start again"; return; }
  lab_result restart_ready_s "$(lab_elapsed "$t")"
  t=$(cut -d' ' -f1 /proc/uptime)
  wait_for host_live 300 "the host reconnects by itself" \
    || { lab_part_fail sigkill "the host did not reconnect (state $(nvme_ctrl_state "$c"))"; return; }
  lab_result reconnect_s "$(lab_elapsed "$t")"
  [ "$(ctrl)" = "$c" ] && lab_result same_host_controller 1
  # The writers that are still running (fast_io_fail_tmo did not end them) go on writing after the reconnect: the
  # check reads only what each had logged.
  for w in $WRITERS; do stop_bg "w-${w%%:*}" 5; rm -f "$ACKDIR/w-${w%%:*}.pid"; done
  for w in $WRITERS; do cat "$LAB_LOGS/w-${w%%:*}.log"; done > "$LAB_LOGS/writers.txt"
  dev=$(nvme_ns_dev "$NQN")
  run_step ack-check 300 python3 "$ACK" check "$dev" "$LAB_LOGS"/ack-*.txt
  rc=$?
  read -r _ checked _ mismatched < <(grep '^checked ' "$LAB_LOGS/ack-check.log")
  lab_result checked "${checked:-0}"
  lab_result mismatched "${mismatched:-none}"
  # The control: a block no writer wrote (block 10000), checked the same way, must be reported.
  echo 10000 > "$ACKDIR/never-written.txt"
  if run_step ack-check-control 120 python3 "$ACK" check "$dev" "$ACKDIR/never-written.txt"; then
    lab_part_fail sigkill "the check passed a block that was never written: it proves nothing"; return
  fi
  lab_result check_detects_missing 1
  [ "$rc" = 0 ] && [ "${mismatched:-1}" = 0 ] \
    || { lab_part_fail sigkill "acknowledged blocks did not read back intact: ${mismatched:-?} of ${checked:-?} (logs/ack-check.log)"; return; }
  [ "${checked:-0}" -ge 128 ] || { lab_part_fail sigkill "only ${checked:-0} blocks checked"; return; }
  nvme_disconnect "$NQN" || { lab_part_fail sigkill "nvme disconnect"; return; }
  lab_part_ok sigkill
}

# --- part: cycles ----------------------------------------------------------------------------------------------
# one_cycle N: connect, wait for the namespace, read 4 KiB through an I/O queue, disconnect, wait until it is gone.
# Prints why on failure (it runs in a subshell: the I/O queue count goes to a file).
one_cycle() {
  local dev c
  run_step "cycle-connect" 60 nvme connect -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" -n "$NQN" -w "$LAB_HOST_ADDR" \
    -q "$HOST" -I "$HOST_ID" > /dev/null || { echo "connect failed in cycle $1"; return 1; }
  dev=$(nvme_ns_dev_for "$NQN" 60 2> /dev/null) || { echo "no namespace in cycle $1"; return 1; }
  c=$(ctrl); echo $(( $(cat "/sys/class/nvme/$c/queue_count") - 1 )) > "$LAB_RUN/io-queues"
  dd if="$dev" of=/dev/null bs=4096 count=1 iflag=direct status=none || { echo "read failed in cycle $1"; return 1; }
  timeout 60 nvme disconnect -n "$NQN" > /dev/null 2>&1 || { echo "disconnect failed in cycle $1"; return 1; }
  wait_for "! nvme_ctrl_for $NQN" 60 "controller gone" 2> /dev/null || { echo "controller left in cycle $1"; return 1; }
}
heap_used_kb() { # from `jcmd PID GC.heap_info` (no GC forced): "... total 262144K, used 12345K"
  timeout 120 "$LAB_JAVA_HOME/bin/jcmd" "$1" GC.heap_info 2>/dev/null | grep -m1 -o 'used [0-9]*K' | tr -dc 0-9
}
part_cycles() {
  local dpid i t0 tc why acc0 rel0 acc rel before after nmt0 nmt1 rss0 rss1 h0 h1 d_total d_other d_rss
  dpid=$(bg_pid daemon2)
  wait_for "! nvme_ctrl_for $NQN && [ \$(queues_open) = 0 ]" 60 "no host connected" \
    || { lab_part_fail cycles "a host is still connected ($(queues_open) queues open)"; return; }
  for i in $(seq 1 "$WARM"); do why=$(one_cycle "warm-$i") || { lab_part_fail cycles "$why"; return; }; done
  wait_for "[ \$(queues_open) = 0 ]" 60 "no queue open after the warm-up" || { lab_part_fail cycles "queues open after the warm-up"; return; }
  before=$(rdma_counts); rdma_snapshot cycles-before
  acc0=$(nvmf_metric '^nvmf_rdma_queues_accepted_total'); rel0=$(nvmf_metric '^nvmf_rdma_queues_released_total')
  nmt0=$(jvm_nmt "$dpid" before) || { lab_part_fail cycles "jcmd VM.native_memory failed (logs/nmt-before.txt)"; return; }
  rss0=$(proc_rss_kb "$dpid"); h0=$(heap_used_kb "$dpid")
  lab_result counts_before "$before"
  lab_result nmt_before "$nmt0"
  lab_result rss_before_kb "$rss0"
  lab_result heap_used_before_kb "${h0:-?}"
  echo "cycle rss_kb qp cq mr cm_id queues_open seconds" > "$LAB_LOGS/cycles-table.txt"
  t0=$(cut -d' ' -f1 /proc/uptime)
  for i in $(seq 1 "$CYCLES"); do
    why=$(one_cycle "$i") || { lab_result cycles_done "$((i - 1))"; lab_part_fail cycles "$why"; return; }
    if [ $((i % 25)) = 0 ]; then
      echo "$i $(proc_rss_kb "$dpid") $(rdma_user_count qp) $(rdma_user_count cq) $(rdma_user_count mr)" \
        "$(rdma_user_count cm_id) $(queues_open) $(lab_elapsed "$t0")" >> "$LAB_LOGS/cycles-table.txt"
    fi
  done
  tc=$(lab_elapsed "$t0")
  NIO=$(cat "$LAB_RUN/io-queues")
  lab_result cycles_done "$CYCLES"
  lab_result cycle_mean_s "$(awk -v t="$tc" -v n="$CYCLES" 'BEGIN { printf "%.2f", t / n }')"
  lab_result io_queues "$NIO"
  wait_for "[ \$(queues_open) = 0 ] && [ \"\$(rdma_counts)\" = '$before' ]" 120 "resources back to [$before]"
  after=$(rdma_counts); rdma_snapshot cycles-after
  acc=$(( $(nvmf_metric '^nvmf_rdma_queues_accepted_total') - acc0 ))
  rel=$(( $(nvmf_metric '^nvmf_rdma_queues_released_total') - rel0 ))
  nmt1=$(jvm_nmt "$dpid" after) || { lab_part_fail cycles "jcmd VM.native_memory failed (logs/nmt-after.txt)"; return; }
  rss1=$(proc_rss_kb "$dpid"); h1=$(heap_used_kb "$dpid")
  d_total=$(( $(kv total "$nmt1") - $(kv total "$nmt0") ))
  d_other=$(( $(kv other "$nmt1") - $(kv other "$nmt0") ))
  d_rss=$(( rss1 - rss0 ))
  lab_result counts_after "$after"
  lab_result queues_accepted "$acc"
  lab_result queues_released "$rel"
  lab_result nmt_after "$nmt1"
  lab_result nmt_total_delta_kb "$d_total"
  lab_result nmt_other_delta_kb "$d_other"
  lab_result rss_after_kb "$rss1"
  lab_result rss_delta_kb "$d_rss"
  lab_result heap_used_after_kb "${h1:-?}"
  lab_result cycles_table "$(tail -n +2 "$LAB_LOGS/cycles-table.txt" | paste -sd';')"
  [ "$after" = "$before" ] || { lab_part_fail cycles "RDMA resources left: before [$before], after [$after]"; return; }
  [ "$(queues_open)" = 0 ] || { lab_part_fail cycles "$(queues_open) queues still open"; return; }
  [ "$acc" = $((CYCLES * (NIO + 1))) ] && [ "$rel" = "$acc" ] \
    || { lab_part_fail cycles "queues accepted $acc, released $rel, want $((CYCLES * (NIO + 1))) each"; return; }
  [ "$d_other" -le "$OTHER_TOL" ] \
    || { lab_part_fail cycles "NMT Other grew by $d_other KiB over $CYCLES cycles (tolerance $OTHER_TOL KiB)"; return; }
  [ "$d_total" -le "$NMT_TOL" ] \
    || { lab_part_fail cycles "NMT total committed grew by $d_total KiB over $CYCLES cycles (tolerance $NMT_TOL KiB)"; return; }
  [ "$d_rss" -le "$RSS_TOL" ] \
    || { lab_part_fail cycles "RSS grew by $d_rss KiB over $CYCLES cycles (tolerance $RSS_TOL KiB)"; return; }
  lab_part_ok cycles
}

# --- part: sigterm ---------------------------------------------------------------------------------------------
part_sigterm() {
  local dev c w dpid t rc
  connect || { lab_part_fail sigterm "nvme connect"; return; }
  wait_for host_live 60 "host live" || { lab_part_fail sigterm "host not live"; return; }
  dev=$(nvme_ns_dev "$NQN"); c=$(ctrl)
  start_bg fio-stop fio --name=during-stop --filename="$dev" --ioengine=libaio --direct=1 --rw=randrw \
    --bssplit=4k/60:16k/20:64k/20 --iodepth=16 --time_based --runtime=300 --size=32M
  w=$(nvmf_io_bytes "$NQN")
  wait_for "[ \$(nvmf_io_bytes $NQN) -ge $((w + 1228800)) ]" 60 "fio is doing I/O (1.2 MB moved)" || { lab_part_fail sigterm "fio did not start"; return; }
  lab_result sigterm_counts_before "$(rdma_counts)"
  dpid=$(bg_pid daemon2)
  lab_log "SIGTERM to the daemon (pid $dpid) during fio"
  t=$(cut -d' ' -f1 /proc/uptime)
  stop_bg daemon2 120
  rc=$?
  lab_result sigterm_exit "$rc"
  lab_result sigterm_exit_s "$(lab_elapsed "$t")"
  grep -q 'stopped: every queue drained' "$LAB_LOGS/daemon2.log" && lab_result sigterm_drained 1
  wait_for "[ \"\$(nvme_ctrl_state $c)\" != live ]" 60 "the host sees the controller go away" \
    || { lab_part_fail sigterm "the host still sees a live controller"; return; }
  timeout 60 nvme disconnect -n "$NQN" > "$LAB_LOGS/nvme-disconnect-after-stop.log" 2>&1
  wait_for "! nvme_ctrl_for $NQN" 60 "host controller removed" || { lab_part_fail sigterm "host controller left"; return; }
  wait_for "! bg_alive fio-stop" 60 "fio ends" || stop_bg fio-stop 5
  wait_for "[ \"\$(sys_counts)\" = '$SYS_BASE' ]" 60 "rdma resources as before the daemon started"
  lab_result sys_counts_after "$(sys_counts)"
  rdma_snapshot after-sigterm
  [ "$rc" = 0 ] || { lab_part_fail sigterm "exit status $rc after SIGTERM"; return; }
  grep -q 'stopped: every queue drained' "$LAB_LOGS/daemon2.log" \
    || { lab_part_fail sigterm "the daemon did not log that every queue drained"; return; }
  [ "$(sys_counts)" = "$SYS_BASE" ] \
    || { lab_part_fail sigterm "rdma resources left: before [$SYS_BASE], after [$(sys_counts)]"; return; }
  lab_part_ok sigterm
}

lab_run_parts "$PARTS"
lab_collect_logs
for d in daemon daemon2; do bg_alive "$d" && stop_bg "$d" 90; done
umount "$FS" 2>/dev/null
lab_result lifecycle_wall_s "$(lab_elapsed "$T0")"
[ -z "$LAB_PARTS_FAILED" ] || lab_die "failed parts:$LAB_PARTS_FAILED"
echo "daemon-lifecycle: PASS"
