#!/bin/bash
# The control for guest JVM crashes under emulation, with no project code running: javac alone compiles the
# daemon's NVMe structure package (target-daemon/src/main/java/dev/nvmf/target/nvme, 17 files, JDK imports only)
# JIT_RUNS times, one JVM each. A run crashed when HotSpot wrote an hs_err report (boot.sh points -XX:ErrorFile at
# logs/, so every report is kept) or printed its fatal-error banner. Run it under both TCG modes (tests/lab/README.md,
# "JVM crashes"):
#   flock /tmp/nvmf-lab.lock env LAB_TCG_THREAD=multi tests/lab/lab.sh --env JIT_RUNS=10 jit-control
#   flock /tmp/nvmf-lab.lock tests/lab/lab.sh --env JIT_RUNS=10 jit-control
# Exit status 0 when no run crashed, 1 otherwise (the counts and signals are in the results either way).
# Results: jit_tcg_thread, jit_runs, jit_crashes, jit_failed (non-zero exit without a report), jit_signals (one per
# crash, from the report's first lines), jit_frames, jit_mean_s, jit_runs_s (each run's seconds).
. "$LAB_REPO/tests/lab/guest/lib.sh"
# This scenario measures the JIT: every JVM of it runs with the JDK's defaults (boot.sh sets C1 only for the others).
export JAVA_TOOL_OPTIONS="${LAB_JVM_ERRORFILE:-$JAVA_TOOL_OPTIONS}"
set -u
RUNS=${JIT_RUNS:-10}
SRC=$LAB_REPO/target-daemon/src/main/java/dev/nvmf/target/nvme
OUTC=$LAB_RUN/jit-classes
mkdir -p "$LAB_RUN" "$LAB_LOGS"
lab_result jit_tcg_thread "${LAB_TCG_THREAD:-single}"
hs_errs() { ls "$LAB_LOGS"/hs_err_pid*.log 2>/dev/null | wc -l; }
crashes=0 failed=0 signals="" frames="" times="" total=0
for i in $(seq 1 "$RUNS"); do
  rm -rf "$OUTC"; mkdir -p "$OUTC"
  before=$(hs_errs)
  t0=$(cut -d' ' -f1 /proc/uptime)
  run_step "javac-$i" 600 "$LAB_JAVA_HOME/bin/javac" -proc:none -d "$OUTC" "$SRC"/*.java > /dev/null
  rc=$?
  s=$(lab_elapsed "$t0")
  times="$times${times:+ }$s"; total=$(awk -v a="$total" -v b="$s" 'BEGIN { print a + b }')
  if [ "$(hs_errs)" -gt "$before" ] || grep -q 'A fatal error has been detected' "$LAB_LOGS/javac-$i.log"; then
    crashes=$((crashes + 1))
    r=$(ls -t "$LAB_LOGS"/hs_err_pid*.log 2>/dev/null | head -n1)
    sig=$(grep -m1 -oE 'SIG[A-Z]+ \(0x[0-9a-f]+\)' "${r:-$LAB_LOGS/javac-$i.log}" 2>/dev/null | cut -d' ' -f1)
    frame=$(grep -m1 -A1 '^# Problematic frame:' "${r:-/dev/null}" 2>/dev/null | tail -n1 | sed 's/^# *//; s/[;=]/ /g')
    signals="$signals${signals:+ }run$i:${sig:-?}"
    frames="$frames${frames:+; }run$i: ${frame:-?}"
    lab_log "javac run $i CRASHED (${sig:-?}, $frame), exit $rc, report ${r:-none}"
  elif [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    lab_log "javac run $i exit $rc without a crash report"
  fi
done
lab_result jit_runs "$RUNS"
lab_result jit_crashes "$crashes"
lab_result jit_failed "$failed"
lab_result jit_signals "${signals:-none}"
lab_result jit_frames "${frames:-none}"
lab_result jit_runs_s "$times"
lab_result jit_mean_s "$(awk -v t="$total" -v n="$RUNS" 'BEGIN { printf "%.1f", t / n }')"
echo "JIT-CONTROL: $crashes of $RUNS javac runs crashed ($failed failed otherwise) under TCG thread=${LAB_TCG_THREAD:-single}"
[ "$crashes" = 0 ] && [ "$failed" = 0 ]
