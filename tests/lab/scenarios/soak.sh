#!/bin/bash
# The soak (scripts/soak.sh runs it; not part of CI): SOAK_MINUTES (30) of mixed fio verify from two Linux hosts at
# once against the daemon, with periodic resets and reconnects, and the daemon's resources sampled over time.
#   host A (10.77.0.2) on subsystem A, host B (10.77.0.3) on subsystem B; each subsystem a RAM and a file namespace
#   (a file on ext4, O_DIRECT); each host runs verify rounds without pause on both its namespaces: random writes of
#   mixed sizes (4k/16k/64k/128k) stamped with crc32c headers, read back and checked at the end of each round;
#   every SOAK_RESET_S (120) seconds `nvme reset` of host A's controller during its rounds; every SOAK_RECONNECT_S
#   (180) seconds host B disconnects between two rounds and connects again;
#   every SOAK_SAMPLE_S (60) seconds one row: the daemon's QPs, CQs, MRs, cm_ids, open queues, controllers, RSS,
#   NMT's total committed and "Other" (every SOAK_NMT_EVERY (5) rows: jcmd costs the guest a JVM start), and
#   the rounds, resets, reconnects and fio errors so far.
# At the end: SIGTERM (exit 0 wanted). Exit status 0 only with no fio error, no failed round, reset or reconnect.
# The table: soak-table.md in the results folder (and on stdout); the daemon runs with a fixed, pre-touched heap and
# -XX:NativeMemoryTracking=summary; no GC is forced.
# Results: soak_minutes, soak_errors, soak_rounds_failed, soak_rounds_a, soak_rounds_b, soak_resets,
# soak_resets_failed, soak_reconnects, soak_reconnects_failed, soak_first_row, soak_last_row, soak_sigterm_exit.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
MIN=${SOAK_MINUTES:-30}
SAMPLE=${SOAK_SAMPLE_S:-60}
RESET_S=${SOAK_RESET_S:-120}
RECONNECT_S=${SOAK_RECONNECT_S:-180}
NMT_EVERY=${SOAK_NMT_EVERY:-5}
SA=nqn.2024-01.dev.nvmf:lab-soak-a
SB=nqn.2024-01.dev.nvmf:lab-soak-b
PORT=4420
NVMF_METRICS=127.0.0.1:9464
HOSTA_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000003a01
HOSTB_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000003b02
HOSTA=nqn.2014-08.org.nvmexpress:uuid:$HOSTA_ID
HOSTB=nqn.2014-08.org.nvmexpress:uuid:$HOSTB_ID
HOSTB_ADDR=10.77.0.3
CFG=$LAB_RUN/soak.yaml
FS=$LAB_RUN/fs
TABLE=$LAB_OUT/soak-table.md
mkdir -p "$LAB_RUN" "$LAB_LOGS" "$FS"

modprobe loop 2>/dev/null
truncate -s 96M "$LAB_RUN/fs.img" && mkfs.ext4 -q -F "$LAB_RUN/fs.img" > "$LAB_LOGS/mkfs.log" 2>&1 \
  && mount -o loop "$LAB_RUN/fs.img" "$FS" || lab_die "cannot make the ext4 file system for the file namespaces"
truncate -s 32M "$FS/a.img" && truncate -s 32M "$FS/b.img" || lab_die "cannot create the namespace files"
cat > "$CFG" <<YAML
subsystems:
  - nqn: $SA
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: 32MiB
      - nsid: 2
        file: $FS/a.img
  - nqn: $SB
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: 32MiB
      - nsid: 2
        file: $FS/b.img
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$SA, $SB]
metrics:
  enabled: true
  listen: $NVMF_METRICS
logging:
  format: plain
YAML
cp "$CFG" "$LAB_LOGS/soak.yaml"
lab_nvmf_command "-XX:NativeMemoryTracking=summary -Xms256m -Xmx256m -XX:+AlwaysPreTouch" || lab_die "no daemon"
start_bg daemon "${LAB_NVMF[@]}" serve --config "$CFG"
wait_for_log daemon ' ready: ' 180 || lab_die "daemon did not become ready"
DPID=$(bg_pid daemon)
lab_add_host_addr "$HOSTB_ADDR" || lab_die "no second host address"

live() { local c; c=$(nvme_ctrl_of "$1" "$2") && [ "$(nvme_ctrl_state "$c")" = live ] && nvme_ns_dev_nsid "$1" 1 > /dev/null && nvme_ns_dev_nsid "$1" 2 > /dev/null; }
connect_as() { # connect_as NAME HOSTNQN HOSTID ADDR SUBNQN
  run_step "connect-$1" 60 nvme connect -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" -n "$5" -w "$4" -q "$2" -I "$3" \
    --reconnect-delay=1 --ctrl-loss-tmo=600 > /dev/null && wait_for "live $5 $2" 60 "host $1 live"
}
FIO=(--ioengine=libaio --direct=1 --rw=randwrite --bssplit=4k/40:16k/30:64k/20:128k/10 --iodepth=8
  --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 --size=8M)
rounds() { # rounds NAME SUBNQN: verify rounds on both namespaces of the host's subsystem
  fio_rounds_bg "$1" "${FIO[@]}" --name="$1-ram" --filename="$(nvme_ns_dev_nsid "$2" 1)" --name="$1-file" --filename="$(nvme_ns_dev_nsid "$2" 2)"
}
connect_as a "$HOSTA" "$HOSTA_ID" "$LAB_HOST_ADDR" "$SA" || lab_die "host A"
connect_as b "$HOSTB" "$HOSTB_ID" "$HOSTB_ADDR" "$SB" || lab_die "host B"
rounds rounds-a "$SA"
rounds rounds-b "$SB"

RESETS=0 RESETS_FAILED=0 RECONNECTS=0 RECONNECTS_FAILED=0 RB_DONE=0 RB_FAILED=0 RB_ERRORS=0 ROW=0
echo "| min | QPs | CQs | MRs | cm_ids | queues open | controllers | RSS MiB | NMT committed MiB | NMT Other KiB | rounds A ok/failed | rounds B ok/failed | resets | reconnects | fio errors |" > "$TABLE"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" >> "$TABLE"
row() {
  local nmt="" tot="-" oth="-" ra rfa ea rb
  if [ $((ROW % NMT_EVERY)) = 0 ]; then
    nmt=$(jvm_nmt "$DPID" "soak-$ROW") && { tot=$(( $(kv total "$nmt") / 1024 )); oth=$(kv other "$nmt"); }
  fi
  fio_rounds_count rounds-a; ra=$ROUNDS; rfa=$ROUNDS_FAILED; ea=$ROUNDS_ERRORS
  fio_rounds_count rounds-b
  rb="$((RB_DONE + ROUNDS - RB_FAILED - ROUNDS_FAILED))/$((RB_FAILED + ROUNDS_FAILED))"
  echo "| $(lab_elapsed "$T0" | awk '{ printf "%.0f", $1 / 60 }') | $(rdma_user_count qp) | $(rdma_user_count cq)" \
    "| $(rdma_user_count mr) | $(rdma_user_count cm_id) | $(nvmf_metric '^nvmf_rdma_queues_open')" \
    "| $(nvmf_metric '^nvmf_controllers\{') | $(( $(proc_rss_kb "$DPID") / 1024 )) | $tot | $oth" \
    "| $((ra - rfa))/$rfa | $rb | $RESETS/$RESETS_FAILED | $RECONNECTS/$RECONNECTS_FAILED" \
    "| $((ea + RB_ERRORS + ROUNDS_ERRORS)) |" >> "$TABLE"
  ROW=$((ROW + 1))
}
reset_a() {
  local c
  c=$(nvme_ctrl_of "$SA" "$HOSTA")
  RESETS=$((RESETS + 1))
  if ! timeout 120 nvme reset "/dev/$c" >> "$LAB_LOGS/soak-resets.log" 2>&1 || ! wait_for "live $SA $HOSTA" 120 "A live after reset"; then
    RESETS_FAILED=$((RESETS_FAILED + 1)); lab_log "reset $RESETS of A FAILED"
  fi
}
reconnect_b() {
  RECONNECTS=$((RECONNECTS + 1))
  fio_rounds_stop rounds-b 600
  RB_DONE=$((RB_DONE + ROUNDS)); RB_FAILED=$((RB_FAILED + ROUNDS_FAILED)); RB_ERRORS=$((RB_ERRORS + ROUNDS_ERRORS))
  mv "$LAB_LOGS/rounds-b.log" "$LAB_LOGS/rounds-b-before-reconnect-$RECONNECTS.log"
  if ! timeout 60 nvme disconnect -n "$SB" >> "$LAB_LOGS/soak-reconnects.log" 2>&1 \
     || ! wait_for "! nvme_ctrl_of $SB $HOSTB" 60 "B disconnected" || ! connect_as b "$HOSTB" "$HOSTB_ID" "$HOSTB_ADDR" "$SB"; then
    RECONNECTS_FAILED=$((RECONNECTS_FAILED + 1)); lab_log "reconnect $RECONNECTS of B FAILED"
  fi
  live "$SB" "$HOSTB" && rounds rounds-b "$SB"
}
END=$(awk -v t="$T0" -v m="$MIN" 'BEGIN { print t + m * 60 }')
now() { cut -d' ' -f1 /proc/uptime; }
next_sample=$(now); next_reset=$(awk -v t="$(now)" -v d="$RESET_S" 'BEGIN { print t + d }')
next_reconnect=$(awk -v t="$(now)" -v d="$RECONNECT_S" 'BEGIN { print t + d }')
due() { awk -v a="$(now)" -v b="$1" 'BEGIN { exit !(a >= b) }'; }
while ! due "$END"; do
  if due "$next_sample"; then row; next_sample=$(awk -v t="$next_sample" -v d="$SAMPLE" 'BEGIN { print t + d }'); fi
  if due "$next_reset"; then reset_a; next_reset=$(awk -v t="$(now)" -v d="$RESET_S" 'BEGIN { print t + d }'); fi
  if due "$next_reconnect"; then reconnect_b; next_reconnect=$(awk -v t="$(now)" -v d="$RECONNECT_S" 'BEGIN { print t + d }'); fi
  bg_alive daemon || { lab_log "the daemon died"; break; }
  sleep 1   # the soak's clock: events are due at fixed times, nothing here waits for a condition
done
fio_rounds_stop rounds-a 600; RA=$ROUNDS RFA=$ROUNDS_FAILED EA=$ROUNDS_ERRORS
fio_rounds_stop rounds-b 600
RB=$((RB_DONE + ROUNDS)) RFB=$((RB_FAILED + ROUNDS_FAILED)) EB=$((RB_ERRORS + ROUNDS_ERRORS))
row
lab_collect_logs
stop_bg daemon 120
SIG=$?
cat "$TABLE"
lab_result soak_minutes "$MIN"
lab_result soak_errors "$((EA + EB))"
lab_result soak_rounds_failed "$((RFA + RFB))"
lab_result soak_rounds_a "$RA"
lab_result soak_rounds_b "$RB"
lab_result soak_resets "$RESETS"
lab_result soak_resets_failed "$RESETS_FAILED"
lab_result soak_reconnects "$RECONNECTS"
lab_result soak_reconnects_failed "$RECONNECTS_FAILED"
lab_result soak_first_row "$(sed -n 3p "$TABLE")"
lab_result soak_last_row "$(tail -n 1 "$TABLE")"
lab_result soak_sigterm_exit "$SIG"
umount "$FS" 2>/dev/null
[ "$((EA + EB))" = 0 ] && [ "$((RFA + RFB))" = 0 ] && [ "$RESETS_FAILED" = 0 ] && [ "$RECONNECTS_FAILED" = 0 ] \
  && [ "$SIG" = 0 ] || lab_die "soak: errors $((EA + EB)), failed rounds $((RFA + RFB)), resets failed $RESETS_FAILED, reconnects failed $RECONNECTS_FAILED, exit $SIG"
echo "soak: PASS"
