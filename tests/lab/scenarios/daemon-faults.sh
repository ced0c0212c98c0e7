#!/bin/bash
# Faults of the network and of the device while the Linux host runs fio verify against the daemon
# (bin/nvmf-target serve --config FILE). One daemon, one boot, four parts; a part that fails records why
# (PART_failed=REASON) and the next part still runs, so one boot reports every part:
#   linkloss   every packet on both veth ends lost for FAULT_LOSS_S (10) seconds (netem loss 100% on va and vb)
#              during host A's fio verify, then delivered again: the host reconnects within its ctrl_loss_tmo, the
#              verify passes, and nothing of the old association is left on the target (the daemon's QPs, CQs and
#              cm_ids as before the fault, the daemon's queue and controller gauges those of one association);
#   resets     `nvme reset` of host A's controller FAULT_RESETS (20) times in a row while fio verify rounds run: each
#              reset comes back live, every round verifies, resources as before;
#   keepalive  host B (its own address 10.77.0.3, its own subsystem, keep-alive timeout FAULT_KATO_S = 5 s) stops
#              talking (every packet from and to its address dropped; host A's path untouched): the daemon ends B's
#              controller by keep-alive expiry (nvmf_keep_alive_expiries_total of B's subsystem +1, within
#              2 x KATO of the silence plus slack), A's verify rounds go on passing, and when B's path returns B
#              reconnects by itself and verifies;
#   hotremove  rxe0 deleted under I/O (`rdma link delete rxe0`) and added back (`rdma link add rxe0 type rxe netdev
#              va`): the daemon keeps running, tears the device's queues down within its drain bound, listens again
#              when the device returns, and both hosts reconnect by themselves and verify.
# The kernel target, as the control (FAULT_KERNEL_CONTROL=1, off by default): the same link loss against nvmet-rdma
# on null_blk in the same boot, before the daemon starts.
#
# Environment: NVMF_BUILD_DIR (the Maven output folder bin/nvmf-target looks in), FAULT_PARTS (default
# "linkloss resets keepalive hotremove"), FAULT_LOSS_S, FAULT_RESETS, FAULT_KATO_S, FAULT_KERNEL_CONTROL.
# Results (per part, 1 = held): PART_ok or PART_failed=REASON; and the figures:
#   linkloss_host_noticed, linkloss_recovered_s (link back to controller live), linkloss_host_reconnects,
#   linkloss_rounds, linkloss_counts_before/after ("qp=N cq=N mr=N pd=N cm_id=N" of the daemon), linkloss_settle_s;
#   resets_done, resets_max_s, resets_mean_s, resets_rounds, resets_counts_after;
#   keepalive_expiry_s (silence to the expiry counted), keepalive_expiries, keepalive_other_expiries,
#   keepalive_b_reconnect_s, keepalive_rounds_a, keepalive_counts_after;
#   hotremove_link_delete_s (or "blocked"), hotremove_daemon_alive, hotremove_teardown_s, hotremove_link_add_ok,
#   hotremove_reconnect_s, hotremove_rounds;
#   kernel_linkloss_recovered_s, kernel_linkloss_verify (the control); faults_wall_s, sigterm_exit.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
SA=nqn.2024-01.dev.nvmf:lab-faults-a
SB=nqn.2024-01.dev.nvmf:lab-faults-b
PORT=4420
NVMF_METRICS=127.0.0.1:9464
HOSTA_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000001a01
HOSTB_ID=5a0c1e7e-4b1d-4c55-9a6e-0a0000001b02
HOSTA=nqn.2014-08.org.nvmexpress:uuid:$HOSTA_ID
HOSTB=nqn.2014-08.org.nvmexpress:uuid:$HOSTB_ID
HOSTB_ADDR=10.77.0.3
LOSS_S=${FAULT_LOSS_S:-10}
RESETS=${FAULT_RESETS:-20}
KATO=${FAULT_KATO_S:-5}
PARTS=${FAULT_PARTS:-linkloss resets keepalive hotremove}
CFG=$LAB_RUN/faults.yaml
mkdir -p "$LAB_RUN" "$LAB_LOGS"
dmesg -C 2>/dev/null || true

# What a failed part may leave behind: the link faults, the verify rounds.
part_cleanup() {
  link_loss off; path_drop "$HOSTB_ADDR" off
  local n
  for n in rounds-a rounds-b; do bg_alive "$n" && { rm -f "$LAB_RUN/$n.run"; stop_bg "$n" 10; }; done
  return 0
}
part_precheck() { bg_alive daemon || { echo "the daemon is not running"; return 1; }; }

# connect_as NAME HOSTNQN HOSTID HOST_TRADDR SUBNQN [OPTIONS]: nvme connect as that host (output in
# logs/connect-NAME.log). A short reconnect delay and a controller-loss timeout longer than every fault here.
connect_as() {
  local n=$1 q=$2 i=$3 w=$4 s=$5
  shift 5
  run_step "connect-$n" 60 nvme connect -t rdma -a "$LAB_TARGET_ADDR" -s "$PORT" -n "$s" -w "$w" -q "$q" -I "$i" \
    --reconnect-delay=1 --ctrl-loss-tmo=600 "$@"
}
ctrl_a() { nvme_ctrl_of "$SA" "$HOSTA"; }
ctrl_b() { nvme_ctrl_of "$SB" "$HOSTB"; }
# a_live / b_live: the host's controller is live and its namespace's block device is there.
a_live() { local c; c=$(ctrl_a) && [ "$(nvme_ctrl_state "$c")" = live ] && nvme_ns_dev "$SA" > /dev/null; }
b_live() { local c; c=$(ctrl_b) && [ "$(nvme_ctrl_state "$c")" = live ] && nvme_ns_dev "$SB" > /dev/null; }
queues_open() { nvmf_metric '^nvmf_rdma_queues_open'; }
controllers_of() { nvmf_metric "^nvmf_controllers\\{.*subsystem=\"$1\""; }
expiries_of() { nvmf_metric "^nvmf_keep_alive_expiries_total\\{.*subsystem=\"$1\""; }
# qcount CTRL: the queues (admin + I/O) the host driver has on a controller.
qcount() { cat "/sys/class/nvme/$1/queue_count" 2>/dev/null || echo 0; }
host_recoveries() { dmesg | grep -c 'starting error recovery'; }
# a_bytes / a_wbytes: bytes the daemon moved (all, written) for host A's subsystem: "I/O flows" (the host's block
# devices account nothing on 6.1 with native multipath).
a_bytes() { nvmf_io_bytes "$SA"; }
a_wbytes() { nvmf_io_bytes "$SA" write; }
# Verify rounds on a host's namespace: random writes with mixed block sizes, each stamped with a crc32c header,
# read back and checked at the end of each round (verify_fatal: the first mismatch fails the round).
FIO_VERIFY=(--ioengine=libaio --direct=1 --rw=randwrite --bssplit=4k/60:16k/20:64k/20 --iodepth=8
  --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0)
rounds_on() { # rounds_on NAME DEV SIZE: verify rounds in the background
  fio_rounds_bg "$1" "${FIO_VERIFY[@]}" --name="$1" --filename="$2" --size="$3"
}
# without_mr: a rdma_counts line without the MR and PD counts. Registered memory belongs to the device, not to an
# association: slabs are registered once and reused by later connections, and one more slab may be registered when
# a new association connects while the old one still holds its regions; the counts are recorded, not compared.
without_mr() { tr ' ' '\n' | grep -Ev '^(mr|pd)=' | paste -sd' '; }
# settle LABEL BASELINE QUEUES BOUND_S: waits until the daemon's QPs, CQs and cm_ids are those of BASELINE (a
# rdma_counts line) and its open-queue gauge is QUEUES; records LABEL_counts_after and LABEL_settle_s.
settle() {
  local t0 want
  t0=$(cut -d' ' -f1 /proc/uptime)
  want=$(echo "$2" | without_mr)
  wait_for "[ \"\$(rdma_counts | without_mr)\" = '$want' ] && [ \$(queues_open) = $3 ]" \
    "$4" "the daemon's QPs, CQs, cm_ids back to [$want], $3 queues open"
  local rc=$?
  lab_result "$1_counts_after" "$(rdma_counts)"
  lab_result "$1_queues_open_after" "$(queues_open)"
  lab_result "$1_settle_s" "$(lab_elapsed "$t0")"
  rdma_snapshot "$1-after"
  return $rc
}

# --- the control: the kernel target under the same link loss ----------------------------------------------------
kernel_control() {
  local KN=nqn.2024-01.dev.nvmf:lab-faults-kernel kdev kc t w
  nullblk_create 1 || return 1
  ktarget_subsys "$KN" /dev/nullb0 && ktarget_port 2 "$LAB_TARGET_ADDR" 4421 "$KN" || return 1
  run_step connect-kernel 60 nvme connect -t rdma -a "$LAB_TARGET_ADDR" -s 4421 -n "$KN" -w "$LAB_HOST_ADDR" \
    -q "$HOSTA" -I "$HOSTA_ID" --reconnect-delay=1 --ctrl-loss-tmo=600 || return 1
  kdev=$(nvme_ns_dev_for "$KN" 60) || return 1
  kc=$(nvme_ctrl_for "$KN")
  start_bg fio-kernel fio --output-format=terse,normal "${FIO_VERIFY[@]}" --rate_iops=100 --name=kernel \
    --filename="$kdev" --size=16M
  # The kernel target's backend counts what it wrote (the host's multipath devices count nothing).
  t=$(blk_writes /dev/nullb0)
  wait_for "[ \$(blk_writes /dev/nullb0) -ge $((t + 100)) ]" 60 "I/O flowing to the kernel target" || return 1
  link_loss on
  lab_hold "$LOSS_S" "link loss (kernel target)"
  link_loss off
  t=$(cut -d' ' -f1 /proc/uptime)
  w=$(blk_writes /dev/nullb0)
  wait_for "[ \"\$(nvme_ctrl_state $kc)\" = live ] && [ \$(blk_writes /dev/nullb0) -gt $w ]" 600 \
    "the kernel target's controller live and writing again"
  lab_result kernel_linkloss_recovered_s "$(lab_elapsed "$t")"
  wait_for "! bg_alive fio-kernel" 300 "fio against the kernel target ends"
  stop_bg fio-kernel 10
  lab_result kernel_linkloss_verify \
    "$(awk -F';' '/^3;fio-/ { print ($5 == 0) ? "ok" : "error " $5 }' "$LAB_LOGS/fio-kernel.log" | head -n1)"
  nvme_disconnect "$KN"
  ktarget_teardown
  modprobe -r null_blk 2>/dev/null
  return 0
}
if [ "${FAULT_KERNEL_CONTROL:-0}" = 1 ]; then
  kernel_control || lab_log "the kernel target's control did not complete"
  link_loss off
fi

# --- the daemon, two subsystems, two hosts ---------------------------------------------------------------------
cat > "$CFG" <<YAML
subsystems:
  - nqn: $SA
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: 48MiB
  - nqn: $SB
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: 16MiB
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
cp "$CFG" "$LAB_LOGS/faults.yaml"
lab_nvmf_command || lab_die "no way to run the daemon"
start_bg daemon "${LAB_NVMF[@]}" serve --config "$CFG"
wait_for_log daemon ' ready: ' 180 || lab_die "daemon did not become ready"
DPID=$(bg_pid daemon)
lab_result daemon_ready 1
lab_add_host_addr "$HOSTB_ADDR" || lab_die "no second host address"

connect_as a "$HOSTA" "$HOSTA_ID" "$LAB_HOST_ADDR" "$SA" || lab_die "nvme connect as host A"
wait_for a_live 60 "host A live" || lab_die "host A's controller not live"
DEVA=$(nvme_ns_dev "$SA"); CA=$(ctrl_a); QA=$(qcount "$CA")
lab_result host_a "$CA $DEVA queues $QA"
fio_run warm-a 180 "${FIO_VERIFY[@]}" --filename="$DEVA" --size=4M || lab_die "host A's first verify failed"
wait_for "[ \$(queues_open) = $QA ]" 60 "daemon counts A's $QA queues" || lab_die "queues open $(queues_open), want $QA"
BASE_A=$(rdma_counts)
lab_result counts_a "$BASE_A"
rdma_snapshot base-a

# --- part: linkloss --------------------------------------------------------------------------------------------
part_linkloss() {
  local w r0 tback rback
  lab_result linkloss_counts_before "$BASE_A"
  r0=$(host_recoveries)
  rounds_on rounds-a "$DEVA" 16M
  w=$(a_wbytes)
  wait_for "[ \$(a_wbytes) -ge $((w + 409600)) ]" 60 "A's I/O flowing (400 KiB written)" \
    || { lab_part_fail linkloss "no I/O"; return; }
  link_loss on || { lab_part_fail linkloss "tc netem refused"; return; }
  # The host notices when its I/O or keep-alive times out (or the transport's retries run out); with a 10 s loss it
  # may or may not do so before the link is back.
  lab_hold "$LOSS_S" "every packet lost"
  link_loss off
  tback=$(cut -d' ' -f1 /proc/uptime)
  fio_rounds_count rounds-a; rback=$ROUNDS
  # Recovered: the controller is live again and I/O flows (writes completed after the link came back).
  w=$(a_wbytes)
  wait_for "a_live && [ \$(a_wbytes) -gt $w ]" 600 "host A live and writing after the link came back" \
    || { lab_part_fail linkloss "host A did not recover within 600 s (state $(nvme_ctrl_state "$(ctrl_a)"))"; return; }
  lab_result linkloss_recovered_s "$(lab_elapsed "$tback")"
  lab_result linkloss_host_reconnects "$(( $(host_recoveries) - r0 ))"
  [ "$(( $(host_recoveries) - r0 ))" -gt 0 ] && lab_result linkloss_host_noticed 1 || lab_result linkloss_host_noticed 0
  # A few more writes and verifies after the recovery, then the rounds end.
  wait_for "fio_rounds_count rounds-a; [ \$ROUNDS -gt $rback ]" 300 "a verify round finished after the loss" || true
  fio_rounds_stop rounds-a 300
  local ok=$?
  lab_result linkloss_rounds "$ROUNDS rounds, $ROUNDS_FAILED failed, $ROUNDS_ERRORS errors"
  [ $ok = 0 ] || { lab_part_fail linkloss "fio verify failed across the loss (logs/rounds-a-*.log)"; return; }
  CA=$(ctrl_a); DEVA=$(nvme_ns_dev "$SA")
  settle linkloss "$BASE_A" "$(qcount "$CA")" 180 \
    || { lab_part_fail linkloss "old association left on the target: $(rdma_counts), queues open $(queues_open)"; return; }
  [ "$(controllers_of "$SA")" = 1 ] || { lab_part_fail linkloss "the daemon counts $(controllers_of "$SA") controllers of A's subsystem"; return; }
  lab_part_ok linkloss
}

# --- part: resets ----------------------------------------------------------------------------------------------
part_resets() {
  local i t w n=0 max=0 sum=0 d
  CA=$(ctrl_a); DEVA=$(nvme_ns_dev "$SA")
  wait_for a_live 180 "host A live at the start of resets" || { lab_part_fail resets "host A not live at the start"; return; }
  rounds_on rounds-a "$DEVA" 8M
  for i in $(seq 1 "$RESETS"); do
    w=$(a_bytes)
    wait_for "[ \$(a_bytes) -ge $((w + 81920)) ]" 120 "I/O flowing before reset $i (80 KiB)" \
      || { lab_part_fail resets "no I/O before reset $i"; return; }
    bg_alive rounds-a || { lab_part_fail resets "the verify rounds ended before reset $i"; return; }
    # The host may be in an error recovery of its own (tests/lab/README.md, "Host I/O stalls"): a reset then
    # fails with "resetting"; wait for the controller to be live and reset again, once.
    wait_for a_live 180 "host A live before reset $i" || { lab_part_fail resets "host A not live before reset $i"; return; }
    t=$(cut -d' ' -f1 /proc/uptime)
    if ! timeout 120 nvme reset "/dev/$CA" >> "$LAB_LOGS/nvme-resets.log" 2>&1; then
      lab_log "nvme reset $i refused in state $(nvme_ctrl_state "$CA"); waiting for live to reset again"
      wait_for a_live 180 "host A live again before reset $i" \
        && timeout 120 nvme reset "/dev/$CA" >> "$LAB_LOGS/nvme-resets.log" 2>&1 \
        || { lab_part_fail resets "nvme reset $i of /dev/$CA exit $? (state $(nvme_ctrl_state "$CA"))"; return; }
    fi
    wait_for a_live 120 "host A live after reset $i" \
      || { lab_part_fail resets "host A not live after reset $i (state $(nvme_ctrl_state "$CA"))"; return; }
    d=$(lab_elapsed "$t")
    n=$i; sum=$(awk -v a="$sum" -v b="$d" 'BEGIN { print a + b }')
    max=$(awk -v a="$max" -v b="$d" 'BEGIN { print (b > a) ? b : a }')
    bg_alive daemon || { lab_part_fail resets "the daemon died during reset $i"; return; }
  done
  lab_result resets_done "$n"
  lab_result resets_max_s "$max"
  lab_result resets_mean_s "$(awk -v s="$sum" -v n="$n" 'BEGIN { printf "%.1f", s / n }')"
  dmesg | grep -c "nvme $CA: resetting controller" > "$LAB_RUN/resets.seen"
  lab_result resets_host_logged "$(cat "$LAB_RUN/resets.seen")"
  fio_rounds_stop rounds-a 300
  local ok=$?
  lab_result resets_rounds "$ROUNDS rounds, $ROUNDS_FAILED failed, $ROUNDS_ERRORS errors"
  [ $ok = 0 ] || { lab_part_fail resets "fio verify failed during the resets (logs/rounds-a-*.log)"; return; }
  settle resets "$BASE_A" "$(qcount "$CA")" 120 \
    || { lab_part_fail resets "resources after the resets: $(rdma_counts), queues open $(queues_open)"; return; }
  lab_part_ok resets
}

# --- part: keepalive -------------------------------------------------------------------------------------------
part_keepalive() {
  local t tq base_ab e0 eo0 qb devb cb
  wait_for a_live 180 "host A live at the start of keepalive" || { lab_part_fail keepalive "host A not live at the start"; return; }
  connect_as b "$HOSTB" "$HOSTB_ID" "$HOSTB_ADDR" "$SB" --keep-alive-tmo="$KATO" \
    || { lab_part_fail keepalive "nvme connect as host B"; return; }
  wait_for b_live 60 "host B live" || { lab_part_fail keepalive "host B not live"; return; }
  cb=$(ctrl_b); devb=$(nvme_ns_dev "$SB"); qb=$(qcount "$cb")
  lab_result keepalive_b_kato "$(cat "/sys/class/nvme/$cb/kato" 2>/dev/null || echo "?")"
  fio_run warm-b 180 "${FIO_VERIFY[@]}" --filename="$devb" --size=2M || { lab_part_fail keepalive "B's first verify"; return; }
  wait_for "[ \$(queues_open) = $((QA + qb)) ]" 60 "daemon counts A's and B's queues" \
    || { lab_part_fail keepalive "queues open $(queues_open), want $((QA + qb))"; return; }
  base_ab=$(rdma_counts)
  lab_result keepalive_counts_before "$base_ab"
  e0=$(expiries_of "$SB"); eo0=$(expiries_of "$SA")
  rounds_on rounds-a "$(nvme_ns_dev "$SA")" 8M
  # B is idle: only its keep-alives (every KATO or so) reach the target. From now on nothing does.
  path_drop "$HOSTB_ADDR" on || { lab_part_fail keepalive "tc refused the drop filter"; return; }
  t=$(cut -d' ' -f1 /proc/uptime)
  wait_for "[ \$(expiries_of $SB) -gt $e0 ]" $((KATO * 2 + 60)) "the daemon expires B's controller" \
    || { lab_part_fail keepalive "no keep-alive expiry of B's controller within $((KATO * 2 + 60)) s"; return; }
  lab_result keepalive_expiry_s "$(lab_elapsed "$t")"
  lab_result keepalive_expiries "$(( $(expiries_of "$SB") - e0 ))"
  wait_for "[ \$(controllers_of $SB) = 0 ] && [ \$(queues_open) = $QA ]" 120 "B's controller and queues gone" \
    || { lab_part_fail keepalive "B's controller not torn down: $(controllers_of "$SB") controllers, $(queues_open) queues"; return; }
  tq=$(lab_elapsed "$t")
  lab_result keepalive_teardown_s "$tq"
  grep -q "host=$HOSTB.*keep-alive timeout" "$LAB_LOGS/daemon.log" && lab_result keepalive_logged 1
  # Hold the silence until B's host noticed too (its own keep-alive timed out), so that it reconnects.
  wait_for "[ \"\$(nvme_ctrl_state $cb)\" != live ]" 120 "host B notices the lost path" \
    || lab_log "host B still thinks its controller is live"
  path_drop "$HOSTB_ADDR" off
  t=$(cut -d' ' -f1 /proc/uptime)
  wait_for b_live 600 "host B reconnects by itself" \
    || { lab_part_fail keepalive "host B did not reconnect (state $(nvme_ctrl_state "$cb"))"; return; }
  lab_result keepalive_b_reconnect_s "$(lab_elapsed "$t")"
  fio_run verify-b-after 180 "${FIO_VERIFY[@]}" --filename="$(nvme_ns_dev "$SB")" --size=2M \
    || { lab_part_fail keepalive "B's verify after the reconnect failed"; return; }
  fio_rounds_stop rounds-a 300
  local ok=$?
  lab_result keepalive_rounds_a "$ROUNDS rounds, $ROUNDS_FAILED failed, $ROUNDS_ERRORS errors"
  lab_result keepalive_other_expiries "$(( $(expiries_of "$SA") - eo0 ))"
  [ $ok = 0 ] || { lab_part_fail keepalive "A's verify failed while B was silent (logs/rounds-a-*.log)"; return; }
  [ "$(( $(expiries_of "$SA") - eo0 ))" = 0 ] || { lab_part_fail keepalive "A's controller expired too"; return; }
  settle keepalive "$base_ab" "$((QA + $(qcount "$(ctrl_b)")))" 120 \
    || { lab_part_fail keepalive "resources after B's return: $(rdma_counts), queues open $(queues_open)"; return; }
  lab_part_ok keepalive
}

# --- part: hotremove -------------------------------------------------------------------------------------------
part_hotremove() {
  local t w live="a_live"
  wait_for a_live 180 "host A live at the start of hotremove" || { lab_part_fail hotremove "host A not live at the start"; return; }
  # Host B is connected only when the keepalive part ran before (FAULT_PARTS may leave it out).
  b_live && live="a_live && b_live"
  rounds_on rounds-a "$(nvme_ns_dev "$SA")" 8M
  DEVA=$(nvme_ns_dev "$SA")
  w=$(a_wbytes)
  wait_for "[ \$(a_wbytes) -ge $((w + 204800)) ]" 60 "A's I/O flowing (200 KiB written)" \
    || { lab_part_fail hotremove "no I/O"; return; }
  t=$(cut -d' ' -f1 /proc/uptime)
  # `rdma link delete` returns only once every user of the device let go of it: in the background, bounded.
  start_bg rdma-link-delete rdma link delete rxe0
  wait_for "[ \$(queues_open) = 0 ]" 120 "the daemon tears rxe0's queues down"
  lab_result hotremove_teardown_s "$(lab_elapsed "$t")"
  lab_result hotremove_queues_open "$(queues_open)"
  if wait_for "! bg_alive rdma-link-delete" 120 "rdma link delete rxe0 returns"; then
    stop_bg rdma-link-delete 5
    lab_result hotremove_link_delete_s "$(lab_elapsed "$t")"
  else
    lab_result hotremove_link_delete_s blocked
    lab_result hotremove_daemon_alive "$(bg_alive daemon && echo 1 || echo 0)"
    rdma_snapshot hotremove-blocked
    cat /proc/"$(bg_pid rdma-link-delete)"/stack > "$LAB_LOGS/rdma-link-delete-stack.txt" 2>&1
    # What still holds the device, in the failure message itself (CI shows it without the logs): the daemon's open
    # uverbs files (each context and each completion channel is one), its RDMA objects, whether it logged the
    # release, the kernel frames `rdma link delete` waits in, and the daemon's threads (SIGQUIT: a thread dump into
    # its log).
    local dpid uv frames rel
    dpid=$(bg_pid daemon)
    uv=$(ls -l /proc/"$dpid"/fd 2>/dev/null | grep -c 'infiniband/uverbs')
    frames=$(grep -o '[a-z_0-9]*+0x' "$LAB_LOGS/rdma-link-delete-stack.txt" 2>/dev/null | head -n 6 | sed 's/+0x//' | tr '\n' ' ')
    kill -QUIT "$dpid" 2>/dev/null
    grep -q 'device rxe0 released' "$LAB_LOGS/daemon.log" && rel=released || rel="not released"
    lab_part_fail hotremove "rdma link delete rxe0 still blocked after 120 s: the device is still in use ($(queues_open) queues open; daemon: $uv uverbs files open, $(rdma_counts), rxe0 $rel; link delete waits in: $frames)"
    return
  fi
  bg_alive daemon || { lab_part_fail hotremove "the daemon died when rxe0 went away"; return; }
  lab_result hotremove_daemon_alive 1
  [ "$(queues_open)" = 0 ] || { lab_part_fail hotremove "$(queues_open) queues still open after rxe0 went away"; return; }
  rdma link add rxe0 type rxe netdev va || { lab_part_fail hotremove "rdma link add rxe0 failed"; return; }
  wait_for "rdma link show rxe0/1 | grep -q 'state ACTIVE'" 60 "rxe0 ACTIVE again" \
    || { lab_part_fail hotremove "rxe0 not ACTIVE again"; return; }
  lab_result hotremove_link_add_ok 1
  t=$(cut -d' ' -f1 /proc/uptime)
  wait_for "$live" 600 "the hosts ($live) reconnect to the returned device" \
    || { lab_part_fail hotremove "hosts did not reconnect after rxe0 returned (A $(nvme_ctrl_state "$(ctrl_a)"), B $(nvme_ctrl_state "$(ctrl_b)"))"; return; }
  lab_result hotremove_reconnect_s "$(lab_elapsed "$t")"
  fio_rounds_stop rounds-a 300
  local ok=$?
  lab_result hotremove_rounds "$ROUNDS rounds, $ROUNDS_FAILED failed, $ROUNDS_ERRORS errors"
  [ $ok = 0 ] || { lab_part_fail hotremove "A's verify failed across the hot-remove (logs/rounds-a-*.log)"; return; }
  fio_run verify-a-after-return 180 "${FIO_VERIFY[@]}" --filename="$(nvme_ns_dev "$SA")" --size=4M \
    || { lab_part_fail hotremove "A's verify on the returned device failed"; return; }
  lab_part_ok hotremove
}

lab_run_parts "$PARTS"

lab_collect_logs
if bg_alive daemon; then
  stop_bg daemon 90
  lab_result sigterm_exit $?
fi
lab_result faults_wall_s "$(lab_elapsed "$T0")"
[ -z "$LAB_PARTS_FAILED" ] || lab_die "failed parts:$LAB_PARTS_FAILED"
echo "daemon-faults: PASS"
