#!/bin/bash
# The AOT cache's effect on the daemon as systemd starts it (bin/nvmf-target serve --config FILE), measured and
# reported, never asserted: start-up to READY and the first minute's IOPS, without the cache (NVMF_AOT=0) and
# with it, daemon after daemon in one guest boot (docs/performance.md, "JIT warm-up and start-up: the AOT cache").
#
# Per start: the launch time (bash's EPOCHREALTIME, no fork) against the daemon's own log timestamps of
# "listening on rdma" and "ready:"; the daemon's CPU time when it was ready; then the Linux host connects and fio
# runs 4 KiB random reads at queue depth 32 for AOT_RUNTIME seconds, its IOPS logged every second; the daemon's
# process and JIT compiler threads' CPU over that minute. Each round starts both variants, the order alternating
# between rounds; before the first, one start of each warms the guest's page cache (jars, JDK, the cache file).
# -Xlog:class+path=info in both shows whether the JVM read the cache ("Reading classpath(s) from ...aot").
#
# Environment: AOT_ROUNDS (default 1), AOT_RUNTIME (seconds of fio per start, default 60), AOT_SIZE_MB (the RAM
# namespace and fio's range, default 256), NVMF_BUILD_DIR (the build bin/nvmf-target uses; it needs the packaged
# jar, and the trained cache for the "on" variant).
# Results: <off|on>_<round>_{listening_ms,ready_ms,cpu_at_ready_ms,aot_read,iops_<from>_<to>,iops,proc_cpu_ms,
# jit_cpu_ms,fio_err}; the table: aot-table.md in the results folder (and on stdout).
. "$LAB_REPO/tests/lab/guest/lib.sh"
# This scenario measures the JIT: every JVM of it runs with the JDK's defaults (boot.sh sets C1 only for the others).
export JAVA_TOOL_OPTIONS="${LAB_JVM_ERRORFILE:-$JAVA_TOOL_OPTIONS}"
set -u
NQN=nqn.2024-01.dev.nvmf:aot-warmup
PORT=4420
ROUNDS=${AOT_ROUNDS:-1}
RUNTIME=${AOT_RUNTIME:-60}
SIZE_MB=${AOT_SIZE_MB:-256}
B=${NVMF_BUILD_DIR:-target}
CFG=$LAB_RUN/aot-daemon.yaml
TABLE=$LAB_OUT/aot-table.md
HZ=$(getconf CLK_TCK)
mkdir -p "$LAB_RUN" "$LAB_LOGS"
ls "$LAB_REPO/target-daemon/$B"/target-daemon-*.jar > /dev/null 2>&1 || lab_die "no packaged jar in target-daemon/$B"
[ -f "$LAB_REPO/target-daemon/$B/nvmf-target.aot" ] || lab_log "no AOT cache in target-daemon/$B: 'on' runs without"
cat > "$CFG" <<YAML
subsystems:
  - nqn: $NQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: ${SIZE_MB}MiB
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
logging:
  format: plain
YAML
cp "$CFG" "$LAB_LOGS/aot-daemon.yaml"

# MS: epoch milliseconds of EPOCHREALTIME value $1; DAY_MS: milliseconds into the (UTC) day of a log line's
# "YYYY-MM-DDTHH:MM:SS.mmmZ" timestamp $1. Builtins only: under TCG a fork costs a good part of a second.
epoch_ms() { local s=${1%.*} f=${1#*.}000; MS=$(( s * 1000 + 10#${f:0:3} )); }
day_ms() {
  [[ $1 =~ T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3}) ]] || { DAY_MS=-1; return 1; }
  DAY_MS=$(( (10#${BASH_REMATCH[1]} * 3600 + 10#${BASH_REMATCH[2]} * 60 + 10#${BASH_REMATCH[3]}) * 1000
    + 10#${BASH_REMATCH[4]} ))
}
# AT: milliseconds from launch (epoch ms $1) to the first line of log $2 matching $3 (bash regex)
log_at() {
  local l
  AT=-1
  while IFS= read -r l; do
    [[ $l =~ $3 ]] && day_ms "$l" && { AT=$(( (DAY_MS - $1 % 86400000 + 86400000) % 86400000 )); return 0; }
  done < "$2"
  return 1
}
# P: utime+stime of /proc/$1/stat in jiffies; J: of its C1/C2 compiler threads.
proc_cpu() { local s; local -a f; read -r s < "/proc/$1/stat" || return 1; s=${s##*) }; read -r -a f <<< "$s"
  P=$((f[11] + f[12])); }
jit_cpu() {
  local t c s; local -a f; J=0
  for t in /proc/"$1"/task/*; do
    read -r c < "$t/comm" 2>/dev/null || continue
    [[ $c == C[12]" Compiler"* ]] || continue
    read -r s < "$t/stat" 2>/dev/null || continue
    s=${s##*) }; read -r -a f <<< "$s"; J=$((J + f[11] + f[12]))
  done
}
jiffies_ms() { MS=$(( $1 * 1000 / HZ )); }

# start_daemon NAME on|off: the daemon as systemd runs it, with or without the cache; waits for "ready:".
start_daemon() {
  local aot=0
  [ "$2" = on ] && aot=1
  LAUNCH=$EPOCHREALTIME
  start_bg "$1" env NVMF_BUILD_DIR="$B" NVMF_JAVA_HOME="$LAB_JAVA_HOME" NVMF_AOT="$aot" \
    NVMF_JAVA_OPTS="-XX:-UsePerfData -Xlog:class+path=info" "$LAB_REPO/bin/nvmf-target" serve --config "$CFG"
  wait_for_log "$1" ' ready: ' 300 || lab_die "$1 did not get ready"
  # env and the launcher exec: the background pid is the JVM's.
  DPID=$(bg_pid "$1")
  [ "$(cat "/proc/$DPID/comm" 2>/dev/null)" = java ] || lab_die "$1: pid $DPID is not the JVM"
}

# round MODE ROUND: one measured start.
round() {
  local mode=$1 k=${1}_$2 name=daemon-${1}-$2 p0 j0 ms
  start_daemon "$name" "$mode"
  epoch_ms "$LAUNCH"; ms=$MS
  proc_cpu "$DPID"; jiffies_ms "$P"; lab_result "${k}_cpu_at_ready_ms" "$MS"
  log_at "$ms" "$LAB_LOGS/$name.log" 'listening on rdma' && lab_result "${k}_listening_ms" "$AT"
  log_at "$ms" "$LAB_LOGS/$name.log" ' ready: ' && lab_result "${k}_ready_ms" "$AT"
  if grep -q 'Reading classpath(s) from .*nvmf-target\.aot' "$LAB_LOGS/$name.log"; then
    lab_result "${k}_aot_read" 1
  else
    lab_result "${k}_aot_read" 0
  fi
  nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" || lab_die "nvme connect ($name)"
  DEV=$(nvme_ns_dev_for "$NQN" 60) || lab_die "no namespace device ($name)"
  proc_cpu "$DPID"; p0=$P; jit_cpu "$DPID"; j0=$J
  fio_run "fio-$k" $((RUNTIME * 3 + 90)) --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k \
    --iodepth=32 --time_based --runtime="$RUNTIME" --size="${SIZE_MB}M" --norandommap --randrepeat=0 \
    --write_iops_log="$LAB_LOGS/fio-$k" --log_avg_msec=1000 > /dev/null || lab_die "fio ($name)"
  proc_cpu "$DPID"; jit_cpu "$DPID"
  jiffies_ms $((P - p0)); lab_result "${k}_proc_cpu_ms" "$MS"
  jiffies_ms $((J - j0)); lab_result "${k}_jit_cpu_ms" "$MS"
  lab_result "${k}_fio_err" "$FIO_ERROR"
  lab_result "${k}_iops" "$FIO_READ_IOPS"
  # IOPS per 10 s of the minute, from fio's per-second log (msec, IOPS, direction, bs, offset).
  awk -F', *' -v k="$k" '{ b = int(($1 - 1) / 10000); s[b] += $2; n[b]++ }
    END { for (i = 0; i in n; i++) printf "%s_iops_%d_%d=%d\n", k, i * 10, i * 10 + 10, s[i] / n[i] }' \
    "$LAB_LOGS/fio-${k}_iops.1.log" | while IFS='=' read -r key v; do lab_result "$key" "$v"; done
  nvme_disconnect "$NQN" || lab_die "nvme disconnect ($name)"
  stop_bg "$name" 60 || lab_die "$name exit status $?"
}

# The page cache: one start of each variant, unmeasured.
for mode in off on; do
  start_daemon "daemon-$mode-warm" "$mode"
  stop_bg "daemon-$mode-warm" 60 || lab_die "daemon-$mode-warm exit status $?"
done
for ((r = 1; r <= ROUNDS; r++)); do
  if [ $((r % 2)) = 1 ]; then round off "$r"; round on "$r"; else round on "$r"; round off "$r"; fi
done
lab_result rounds_ok "$ROUNDS"

R=$LAB_OUT/results.properties
val() { awk -F= -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? "-" : v) }' "$R"; }
{
  echo "# aot-warmup: the daemon without and with the AOT cache, $ROUNDS round(s), one boot"
  echo
  echo "| start | cache read | listening ms | ready ms | CPU at ready ms | IOPS 0-10 s | 10-20 | 20-30 | 30-40 | 40-50 | 50-60 | IOPS ${RUNTIME} s | JIT CPU ms | daemon CPU ms |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for ((r = 1; r <= ROUNDS; r++)); do
    for mode in off on; do
      k=${mode}_$r
      echo "| $mode #$r | $(val "${k}_aot_read") | $(val "${k}_listening_ms") | $(val "${k}_ready_ms") |" \
        "$(val "${k}_cpu_at_ready_ms") | $(val "${k}_iops_0_10") | $(val "${k}_iops_10_20") |" \
        "$(val "${k}_iops_20_30") | $(val "${k}_iops_30_40") | $(val "${k}_iops_40_50") |" \
        "$(val "${k}_iops_50_60") | $(val "${k}_iops") | $(val "${k}_jit_cpu_ms") | $(val "${k}_proc_cpu_ms") |"
    done
  done
} > "$TABLE"
cat "$TABLE"
