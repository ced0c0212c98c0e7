#!/bin/bash
# Performance, measured and reported (never asserted): the same fio jobs, in ONE guest boot, over the same
# Soft-RoCE link (host rxe1 -> target rxe0), against
#   kernel  the Linux kernel target (nvmet-rdma) on a memory-backed null_blk device, and
#   daemon  our daemon (bin/nvmf-target serve --config FILE) with a RAM namespace,
# both serving at the same time (each on its own port and NQN; an idle target blocks, it does not spin), the
# jobs alternating kernel/daemon back to back so that slow drift of the emulator's speed hits both alike:
#   randread4k_qd32    4 KiB random read,  queue depth 32   (IOPS)
#   randwrite4k_qd32   4 KiB random write, queue depth 32   (IOPS)
#   randread4k_qd1     4 KiB random read,  queue depth 1    (completion latency mean / p50 / p99, submission mean,
#                                                            total latency mean / p50 / p99)
#   seqread128k_qd8    128 KiB sequential read, depth 8     (MB/s)
# plus the link's ceiling from perftest (RDMA WRITE and READ of 4 KiB, rdma_cm: -R is required in the lab, and
# with it the client runs on rxe0's loopback: an upper bound, see link_ceiling).
#
# CPU: for every job, the guest's busy CPU time (/proc/stat: everything but idle and iowait: fio, the host
# driver, rxe's softirqs and the target together) per I/O, for both targets: comparable, but not the target's
# own. For the daemon also its process CPU (utime+stime of /proc/PID/stat: pollers, CM thread, JIT, GC,
# metrics) and its poller threads' and JIT compiler threads' alone (logs/daemon-threads-cpu.txt: every group).
# Both the guest's CPU and the pollers' are split by mode: user, system (system calls and kernel threads) and, for
# the guest, interrupts and softirqs, to show where an I/O's CPU goes: our code, the kernel's verbs and rxe paths.
# The emulator's CPU (the host's count of the qemu process, through lab.sh's OUT/host-cpu) per I/O and as a share of
# the job's wall time, for both targets: the guest's /proc/stat charges whole timer ticks, and under
# single-threaded TCG a vCPU's ticks keep coming while the one emulator thread runs the other vCPU; the host's count
# does not depend on that (the emulator sleeps only when both vCPUs are halted).
# Downcalls: the daemon's verbs calls per I/O in each job (nvmf_rdma_verbs_calls_total, scraped before and after).
# The kernel target's work runs in kworkers, softirq and interrupt context shared with the host side: it cannot
# be attributed to the target, so there is no per-process figure for it.
#
# TCG emulation makes every number ~1000x slower than hardware: only ratios within this boot mean anything.
#
# On a machine with a real RDMA NIC, tests/lab/hw.sh runs this scenario without a VM (scripts/bench.sh hw): LAB_HW=1,
# the NIC's addresses in LAB_TARGET_ADDR and LAB_HOST_ADDR, its devices in LAB_TARGET_IBDEV and LAB_HOST_IBDEV (for
# perftest). There the "guest" figures are the whole machine's, and there is no emulator: no emulator_* or tcg_*.
#
# Environment: PERF_RUNTIME (seconds per job, default 8), PERF_WARMUP (seconds of warm-up of the kernel target,
# default 6), PERF_DAEMON_WARMUP (of the daemon, default 24: its JIT compiles under emulation), PERF_SIZE_MB
# (the range fio touches, default 256), PERF_PERFTEST (0 skips the link ceiling), PERF_TRANSPORT (the daemon's
# transport keys, below), PERF_PROFILE (jobs to profile with perf(1), below), PERF_TRACE (1: a traced QD1 job
# after the measured ones, below), PERF_POLLER_CPUS and PERF_FIO_CPUS (vCPUs for the daemon's pollers and for
# fio, below), PERF_JAVA_OPTS (JVM options added
# to the daemon's, e.g. -XX:+UseSerialGC), PERF_AOT (0: the daemon starts
# without the AOT cache; default: with it when the build trained one), NVMF_BUILD_DIR (the Maven
# output folder bin/nvmf-target looks in; without a packaged jar the daemon's main class runs from LAB_CLASSPATH).
# Results (results.properties): <target>_<job>_{iops,mbps,ios,err,clat_mean_us,clat_p50_us,clat_p99_us,slat_mean_us,
# lat_mean_us,lat_p50_us,lat_p99_us (QD1 only; lat = slat + clat),
# guest_cpu_us_per_io,guest_{user,sys,irq}_cpu_us_per_io,ctxt_per_io (the guest's context switches),
# emulator_cpu_us_per_io,emulator_busy_pct,link_pkts_per_io,
# link_<counter> (rxe's counters over the job, and backlog_dropped: see link_counters),
# tcg_{tb_flush,tb_invalidate,tlb_full,tlb_partial}{,_per_io},tcg_tb_new,tcg_code_kib,tcg_code_bytes_per_io (the
# emulator's translation work over the job, from QEMU's `info jit`: lab_tcg_stats)}, daemon_<job>_{proc,poller,jit}_cpu_us_per_io,
# daemon_<job>_poller_{user,sys}_cpu_us_per_io, daemon_<job>_calls_<call>{,_per_io} (call: poll_cq poll_cq_empty
# post_send post_recv req_notify_cq get_cq_event ack_cq_events epoll_wait), daemon_<job>_calls_all_per_io (every
# call but the empty polls, counted in poll_cq already), daemon_aot_cache, link_write4k_{mbps,msgs},
# link_read4k_{mbps,msgs}, jobs_ok; the table: perf-table.md in the results folder (and on stdout).
. "$LAB_REPO/tests/lab/guest/lib.sh"
# This scenario measures the JIT: every JVM of it runs with the JDK's defaults (boot.sh sets C1 only for the others).
export JAVA_TOOL_OPTIONS="${LAB_JVM_ERRORFILE:-$JAVA_TOOL_OPTIONS}"
set -u
KNQN=nqn.2024-01.dev.nvmf:perf-kernel
DNQN=nqn.2024-01.dev.nvmf:perf-daemon
KPORT=4420
DPORT=4421
RUNTIME=${PERF_RUNTIME:-8}
WARMUP=${PERF_WARMUP:-6}
DAEMON_WARMUP=${PERF_DAEMON_WARMUP:-24}
SIZE_MB=${PERF_SIZE_MB:-256}
CFG=$LAB_RUN/perf-daemon.yaml
TABLE=$LAB_OUT/perf-table.md
HZ=$(getconf CLK_TCK)
mkdir -p "$LAB_RUN" "$LAB_LOGS"
JOB_LIMIT=$((RUNTIME * 6 + 90))    # fio's own bound: start-up under emulation is slow, a hang is not waited out

# --- CPU accounting ------------------------------------------------------------------------------------------
# Every helper between the jobs uses shell builtins only and sets a variable instead of printing: under TCG a
# fork+exec costs a good part of a second, and a few dozen of them per job used to add minutes to the run.

# G: busy jiffies of the whole guest: user nice system irq softirq steal (not idle, not iowait); of them GU in user
# mode (user, nice), GS in system calls and kernel threads (system), GI in interrupts and softirqs (irq, softirq:
# rxe's receive path and the kernel target's completions run there).
guest_busy() { local -a a; local n v; read -r -a a < /proc/stat; G=$((a[1] + a[2] + a[3] + a[6] + a[7] + a[8]))
  GU=$((a[1] + a[2])); GS=${a[3]}; GI=$((a[6] + a[7]))
  # CTXT: the guest's context switches so far, all CPUs (kernel threads' among them: a switch to or from one
  # keeps the address space, so only some of these flush the emulated TLB; tcg_tlb_* counts those).
  CTXT=0; while read -r n v _; do [ "$n" = ctxt ] && { CTXT=$v; break; }; done < /proc/stat; }
# P: utime+stime of process $1 (all its threads), in jiffies; PU the utime (user mode: our code and the verbs
# provider's user-space part), PS the stime (in the kernel: system calls, rxe's send path among them). The comm
# field may hold spaces: cut after ") ".
stat_cpu() { local s; local -a f; read -r s < "$1" 2>/dev/null || { P=0 PU=0 PS=0; return 1; }; s=${s##*) }
  read -r -a f <<< "$s"; PU=${f[11]}; PS=${f[12]}; P=$((PU + PS)); }
proc_cpu() { stat_cpu "/proc/$1/stat"; }
# Q: utime+stime of the threads of process $1 whose name starts with $2 (names are cut to 15 characters); QU, QS
# the two parts.
threads_cpu() {
  local t c; Q=0 QU=0 QS=0
  for t in /proc/"$1"/task/*; do
    read -r c < "$t/comm" 2>/dev/null || continue
    [[ $c == "$2"* ]] && stat_cpu "$t/stat" && Q=$((Q + P)) QU=$((QU + PU)) QS=$((QS + PS))
  done
}
# The daemon's verbs downcalls (nvmf_rdma_verbs_calls_total{poller,call}, summed over pollers) into file $1, one
# "call count" line each. Outside the measured window: curl and awk are a fork+exec each, slow under TCG.
CALLS="poll_cq poll_cq_empty post_send post_recv req_notify_cq get_cq_event ack_cq_events epoll_wait"
verbs_calls() {
  curl -s --max-time 20 "http://127.0.0.1:9464/metrics" | awk '/^nvmf_rdma_verbs_calls_total\{/ {
      if (match($0, /call="[a-z_]+"/)) { c = substr($0, RSTART + 6, RLENGTH - 7); n[c] += $NF } }
    END { for (c in n) printf "%s %d\n", c, n[c] }' > "$1"
}
# THREADS_<n>: CPU jiffies of process $1's threads grouped by name without its number ("GC Thread#1" -> "GC
# Thread"), into the associative array named $2.
thread_groups() {
  local t c; local -n acc=$2
  for t in /proc/"$1"/task/*; do
    read -r c < "$t/comm" 2>/dev/null || continue
    c=${c%%#*}; while [[ $c == *[0-9] ]]; do c=${c%?}; done; c=${c%-}
    stat_cpu "$t/stat" && acc[$c]=$(( ${acc[$c]:-0} + P ))
  done
}
# U: microseconds of CPU per I/O (one decimal) from jiffies $1 and I/O count $2
us_per_io() {
  local x
  if [ "$2" -gt 0 ]; then x=$(( $1 * 10000000 / HZ / $2 )); U="$((x / 10)).$((x % 10))"; else U=n/a; fi
}

# PERF_PROFILE=JOB[,JOB...]: where the guest's CPU goes in those jobs, for both targets: perf(1) samples every CPU
# on the cpu-clock (a timer: TCG has no PMU) at 499 Hz while fio runs, and after the daemon exits (its JVM writes
# /tmp/perf-PID.map for its compiled Java methods: -XX:+DumpPerfMapAtExit) reports the symbols by command, library
# and symbol into logs/profile-fio-TARGET-JOB.txt, and keeps the samples (logs/*.perf.data), the guest's kallsyms
# and the JVM's map. Sampling slows both targets (about half the IOPS): read shares, not rates.
PROFILE_JOBS=",${PERF_PROFILE:-},"
# perf starts with its events disabled (-D -1) and is enabled over its control fifo once it is ready: its start
# (reading every process's maps, the kernel's symbols) takes tens of seconds under TCG, most of a job. Both fifos
# are opened read-write here, so neither side's open blocks.
profile_start() {
  local job=${1#fio-*-} ctl=$LAB_RUN/$1.ctl ack=$LAB_RUN/$1.ack a=""
  [[ $PROFILE_JOBS == *",$job,"* ]] || return 0
  mkfifo "$ctl" "$ack" || return 0
  exec {PCTL}<>"$ctl" {PACK}<>"$ack"
  start_bg "perf-$1" perf record -a -F 499 -e cpu-clock -D -1 --control "fifo:$ctl,$ack" -o "$LAB_RUN/$1.perf.data"
  echo enable >&"$PCTL"
  read -r -t 180 a <&"$PACK"
  lab_log "perf record ($1): ${a:-no ack within 180 s}"
}
profile_stop() {
  bg_alive "perf-$1" || return 0
  kill -INT "$(bg_pid "perf-$1")"; wait_for "! bg_alive perf-$1" 60 "perf record ($1) exits" || stop_bg "perf-$1" 5
  exec {PCTL}>&- {PACK}>&-
}
profile_reports() {
  local f n=""
  for f in "$LAB_RUN"/*.perf.data; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .perf.data)
    run_step "report-$n" 300 perf report -i "$f" --stdio --no-children --sort comm,dso,sym --percent-limit 0.02 \
      > /dev/null
    mv "$LAB_LOGS/report-$n.log" "$LAB_LOGS/profile-$n.txt"
    run_step "report-dso-$n" 300 perf report -i "$f" --stdio --no-children --sort comm,dso > /dev/null
    cat "$LAB_LOGS/report-dso-$n.log" >> "$LAB_LOGS/profile-$n.txt"; rm -f "$LAB_LOGS/report-dso-$n.log"
    cp "$f" "$LAB_LOGS/"
  done
  # For reports on the host (perf report --kallsyms): the guest's kernel symbols and the JVM's map of its code.
  if [ -n "$n" ]; then cp /proc/kallsyms "$LAB_LOGS/kallsyms.txt"; cp /tmp/perf-*.map "$LAB_LOGS/" 2>/dev/null; fi
}

# PERF_TRACE=1: after the measured jobs, a short QD1 random read (PERF_TRACE_SECONDS, default 2) against each
# target while perf(1) records tracepoints on every CPU: fio's io_submit and io_getevents, the host driver's
# nvme_setup_cmd and nvme_complete_rq, the kernel target's nvmet_req_init and nvmet_req_complete, the scheduler's
# wake-ups and switches, softirqs, inter-processor interrupts (reschedule, function call) and the daemon's system
# calls (rxe's user post_send and req_notify are writes to the verbs device, get_cq_event a read, the wait an
# epoll_wait). The events as text (perf script) go to logs/trace-TARGET-qd1.txt; tests/lab/qd1-timeline.awk turns
# them into where a QD1 I/O's time goes on each vCPU. Not in the measured jobs: tracing costs time of its own.
TRACE_EVENTS="syscalls:sys_enter_io_submit syscalls:sys_exit_io_submit syscalls:sys_enter_io_getevents
syscalls:sys_exit_io_getevents nvme:nvme_setup_cmd nvme:nvme_complete_rq nvmet:nvmet_req_init
nvmet:nvmet_req_complete sched:sched_wakeup sched:sched_switch irq:softirq_entry irq:softirq_exit
irq_vectors:reschedule_entry irq_vectors:call_function_single_entry irq_vectors:call_function_entry
syscalls:sys_enter_write syscalls:sys_exit_write syscalls:sys_enter_read syscalls:sys_exit_read
syscalls:sys_enter_epoll_wait syscalls:sys_exit_epoll_wait"
trace_qd1() {
  local tgt=$1 dev=$2 e ev="" ctl=$LAB_RUN/trace-$1.ctl ack=$LAB_RUN/trace-$1.ack a="" t=/sys/kernel/tracing
  [ -d "$t/events" ] || mount -t tracefs nodev "$t" 2>/dev/null || t=/sys/kernel/debug/tracing
  [ -d "$t/events" ] || { mount -t debugfs nodev /sys/kernel/debug 2>/dev/null; t=/sys/kernel/debug/tracing; }
  # Only the events this kernel has: perf record refuses the lot for one unknown name.
  for e in $TRACE_EVENTS; do [ -d "$t/events/${e%%:*}/${e#*:}" ] && ev="$ev${ev:+,}$e"; done
  lab_result "${tgt}_trace_events" "${ev:-none}"
  [ -n "$ev" ] || { lab_log "trace: no tracepoints under $t"; return 1; }
  mkfifo "$ctl" "$ack" || return 1
  exec {TCTL}<>"$ctl" {TACK}<>"$ack"
  start_bg "trace-$tgt" perf record -a -e "$ev" -D -1 --control "fifo:$ctl,$ack" -o "$LAB_RUN/trace-$tgt.data"
  echo enable >&"$TCTL"
  read -r -t 180 a <&"$TACK"
  lab_log "perf record (trace, $tgt): ${a:-no ack within 180 s}"
  run_step "fio-$tgt-trace-qd1" "$JOB_LIMIT" fio --name="trace-$tgt" --output-format=terse,normal --filename="$dev" \
    --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=1 --time_based \
    --runtime="${PERF_TRACE_SECONDS:-2}" --size="${SIZE_MB}M" --norandommap --randrepeat=0 > /dev/null
  kill -INT "$(bg_pid "trace-$tgt")"
  wait_for "! bg_alive trace-$tgt" 120 "perf record (trace, $tgt) exits" || stop_bg "trace-$tgt" 5
  exec {TCTL}>&- {TACK}>&-
  run_step "trace-$tgt-qd1" 900 perf script -i "$LAB_RUN/trace-$tgt.data" -F comm,tid,cpu,time,event,trace \
    > /dev/null
  mv "$LAB_LOGS/trace-$tgt-qd1.log" "$LAB_LOGS/trace-$tgt-qd1.txt"
}

# The link's own events over a job: rxe's counters (kernel rxe_hw_counters.c), summed over both devices, and the
# packets the receive backlog dropped (/proc/net/softnet_stat, second column, hex, summed over CPUs). A dropped
# packet costs an RC retransmission after the local ACK timeout (IBA chapter 9, retry): emulator time in which no
# vCPU has work. Into the associative array named $1; builtins only.
LINK_COUNTERS="sent_pkts duplicate_request out_of_seq_request rcvd_seq_err rcvd_rnr_err send_rnr_err
completer_retry_err retry_exceeded_err retry_rnr_exceeded_err send_err"
link_counters() {
  local -n acc=$1; local d c v a b
  acc=()
  for d in /sys/class/infiniband/*/ports/1/hw_counters; do
    for c in $LINK_COUNTERS; do
      [ -r "$d/$c" ] && read -r v < "$d/$c" && acc[$c]=$(( ${acc[$c]:-0} + v ))
    done
  done
  acc[backlog_dropped]=0
  while read -r a b _; do acc[backlog_dropped]=$(( ${acc[backlog_dropped]} + 16#$b )); done < /proc/net/softnet_stat
}

# V2: $1 per $2 with two decimals (0.00 when $2 is 0)
per_io_2() { local x=0; [ "$2" -gt 0 ] && x=$(( $1 * 100 / $2 )); printf -v V2 '%d.%02d' $((x / 100)) $((x % 100)); }

# copy_tcg NAME: NAME (an associative array) = a copy of TCG (lab_tcg_stats)
copy_tcg() { local -n dst=$1; local c; dst=(); for c in "${!TCG[@]}"; do dst[$c]=${TCG[$c]}; done; }

# --- fio -----------------------------------------------------------------------------------------------------

# F: the fields of fio's terse line (F[0] = field 1) in log $1
terse_fields() {
  local l; F=()
  while IFS= read -r l; do [[ $l == "3;fio-"* ]] && { IFS=';' read -r -a F <<< "$l"; return 0; }; done < "$1"
  return 1
}
# V: percentile $2 (e.g. 50.000000) among F[$1 .. $1+19] (clat percentiles, "P%=usec")
terse_pct() {
  local i; V=-
  for ((i = $1; i < $1 + 20; i++)); do [[ ${F[i]} == "$2%="* ]] && { V=${F[i]#*=}; return; }; done
}

JOBS="randread4k_qd32 randwrite4k_qd32 randread4k_qd1 seqread128k_qd8"
FIO_CPUS=""; [ -n "${PERF_FIO_CPUS:-}" ] && FIO_CPUS="--cpus_allowed=$PERF_FIO_CPUS"
job_opts() {
  case $1 in
    randread4k_qd32)  OPTS=(--rw=randread --bs=4k --iodepth=32); BS=4096 ;;
    randwrite4k_qd32) OPTS=(--rw=randwrite --bs=4k --iodepth=32); BS=4096 ;;
    # --lat_percentiles: the total latency's too (fio_clat_pct, lib.sh: the terse line then has those)
    randread4k_qd1)   OPTS=(--rw=randread --bs=4k --iodepth=1 --lat_percentiles=1); BS=4096 ;;
    seqread128k_qd8)  OPTS=(--rw=read --bs=128k --iodepth=8); BS=131072 ;;
  esac
}

# run_job TARGET JOB DEV [PID]: one measured fio job; records its numbers and CPU deltas.
run_job() {
  local tgt=$1 job=$2 dev=$3 pid=${4:-} name="fio-$1-$2" g0 gu0 gs0 gi0 p0=0 p1=0 q0=0 q1=0 qu0=0 qu1=0 qs0=0 qs1=0
  local c0=0 c1=0 h0 w0 x0 kb iops ios err k=${1}_$2 out
  job_opts "$job"
  profile_start "$name"
  [ -n "$pid" ] && verbs_calls "$LAB_LOGS/$name.calls0"
  local -A lc0=() lc1=() tc0=() tc1=()
  link_counters lc0
  # The emulator's translation counters, outside the CPU counts: the monitor's walk costs the emulator's CPU.
  lab_tcg_stats && copy_tcg tc0
  guest_busy; g0=$G gu0=$GU gs0=$GS gi0=$GI x0=$CTXT
  lab_host_cpu; h0=$H w0=$W
  if [ -n "$pid" ]; then
    proc_cpu "$pid"; p0=$P; threads_cpu "$pid" nvmf-rdma-poll; q0=$Q qu0=$QU qs0=$QS
    threads_cpu "$pid" "C1 Compiler"; c0=$Q; threads_cpu "$pid" "C2 Compiler"; c0=$((c0 + Q))
  fi
  run_step "$name" "$JOB_LIMIT" fio --name="$name" --output-format=terse,normal --filename="$dev" $FIO_CPUS \
    --ioengine=libaio --direct=1 "${OPTS[@]}" --time_based --runtime="$RUNTIME" --size="${SIZE_MB}M" \
    --norandommap --randrepeat=0 --group_reporting > /dev/null
  local rc=$?
  guest_busy
  lab_host_cpu
  lab_tcg_stats && copy_tcg tc1
  link_counters lc1
  profile_stop "$name"
  if [ -n "$pid" ]; then
    proc_cpu "$pid"; p1=$P; threads_cpu "$pid" nvmf-rdma-poll; q1=$Q qu1=$QU qs1=$QS
    threads_cpu "$pid" "C1 Compiler"; c1=$Q; threads_cpu "$pid" "C2 Compiler"; c1=$((c1 + Q))
    verbs_calls "$LAB_LOGS/$name.calls1"
  fi
  [ $rc = 0 ] || { lab_log "fio $name exit $rc"; return 1; }
  terse_fields "$LAB_LOGS/$name.log" || { lab_log "fio $name: no terse line"; return 1; }
  err=${F[4]}
  case $job in *write*) kb=${F[46]}; iops=${F[48]} ;; *) kb=${F[5]}; iops=${F[7]} ;; esac
  ios=$((kb * 1024 / BS))
  out="${k}_iops=$iops
${k}_ios=$ios
${k}_err=$err
${k}_mbps=$(printf '%d.%02d' $((kb / 1024 / RUNTIME)) $(( (kb * 100 / 1024 / RUNTIME) % 100 )))"
  if [ "$job" = randread4k_qd1 ]; then
    # The completion latency (clat: from io_submit's return to the completion) and the total (lat: submission
    # included, what the application waits). Under single-threaded TCG the target's work can run inside the
    # host's io_submit (the emulator switches vCPUs there), which moves time from clat into slat: lat is the
    # figure that cannot be moved.
    terse_pct 17 50.000000; local lp50=$V; terse_pct 17 99.000000; local lp99=$V
    fio_clat_pct "$LAB_LOGS/$name.log" 50.00; local p50=$V; fio_clat_pct "$LAB_LOGS/$name.log" 99.00
    out="$out
${k}_clat_mean_us=${F[15]%%.*}
${k}_slat_mean_us=${F[11]%%.*}
${k}_lat_mean_us=${F[39]%%.*}
${k}_clat_p50_us=$p50
${k}_clat_p99_us=$V
${k}_lat_p50_us=$lp50
${k}_lat_p99_us=$lp99"
  fi
  # cpu_line NAME JIFFIES: "<target>_<job>_NAME_us_per_io=..." appended to out
  cpu_line() { us_per_io "$2" "$ios"; out="$out
${k}_$1_us_per_io=$U"; }
  local c
  for c in $LINK_COUNTERS backlog_dropped; do out="$out
${k}_link_$c=$(( ${lc1[$c]:-0} - ${lc0[$c]:-0} ))"; done
  per_io_2 $(( ${lc1[sent_pkts]:-0} - ${lc0[sent_pkts]:-0} )) "$ios"; out="$out
${k}_link_pkts_per_io=$V2"
  # The emulator's translation work over the job (tcg-stats.py): new translated code, invalidated blocks (guest
  # writes to pages that hold translated code), whole-buffer flushes, and whole-TLB flushes (a CR3 load: an
  # address-space switch), which QEMU (accel/tcg/cputlb.c, tlb_flush_by_mmuidx_async_work) counts as "full" only
  # when every MMU mode held entries and otherwise as "partial", once per mode flushed (2-4 of x86's five: user,
  # kernel, kernel with SMAP off); one-page flushes (invlpg) are not counted. Per I/O, two decimals; code in bytes
  # per I/O. Absent when the host runs no reader.
  if [ -n "${tc0[tb_count]:-}" ] && [ -n "${tc1[tb_count]:-}" ]; then
    for c in tb_flush tb_invalidate tlb_full tlb_partial; do
      out="$out
${k}_tcg_$c=$(( ${tc1[$c]} - ${tc0[$c]} ))"
      per_io_2 $(( ${tc1[$c]} - ${tc0[$c]} )) "$ios"; out="$out
${k}_tcg_${c}_per_io=$V2"
    done
    out="$out
${k}_tcg_tb_new=$(( ${tc1[tb_count]} - ${tc0[tb_count]} ))"
    # After a flush the buffer restarts from empty: its growth is then not the job's new code.
    if [ "${tc1[tb_flush]}" = "${tc0[tb_flush]}" ]; then
      per_io_2 $(( ${tc1[code_bytes]} - ${tc0[code_bytes]} )) "$ios"; out="$out
${k}_tcg_code_kib=$(( (${tc1[code_bytes]} - ${tc0[code_bytes]}) / 1024 ))
${k}_tcg_code_bytes_per_io=$V2"
    fi
  fi
  per_io_2 $((CTXT - x0)) "$ios"; out="$out
${k}_ctxt_per_io=$V2"
  cpu_line guest_cpu $((G - g0))
  cpu_line guest_user_cpu $((GU - gu0))
  cpu_line guest_sys_cpu $((GS - gs0))
  cpu_line guest_irq_cpu $((GI - gi0))
  # The emulator's CPU per I/O (µs, one decimal) and its busy share of the job's wall time (%): host-side counts.
  if [ "$h0" -ge 0 ] && [ "$H" -ge 0 ] && [ "$ios" -gt 0 ] && [ $((W - w0)) -gt 0 ]; then
    local x=$(( (H - h0) * 10 / ios ))
    out="$out
${k}_emulator_cpu_us_per_io=$((x / 10)).$((x % 10))
${k}_emulator_busy_pct=$(( (H - h0) * 100 / (W - w0) ))"
  fi
  if [ -n "$pid" ]; then
    cpu_line poller_user_cpu $((qu1 - qu0))
    cpu_line poller_sys_cpu $((qs1 - qs0))
    cpu_line proc_cpu $((p1 - p0))
    cpu_line poller_cpu $((q1 - q0))
    cpu_line jit_cpu $((c1 - c0))
    # Downcalls per I/O, two decimals (per 100 I/Os in integers), and the counts themselves.
    local c n all=0; local -A d=()
    while read -r c n; do d[$c]=$n; done < <(awk 'NR == FNR { a[$1] = $2; next } { print $1, $2 - a[$1] }' \
      "$LAB_LOGS/$name.calls0" "$LAB_LOGS/$name.calls1")
    for c in $CALLS; do
      n=${d[$c]:-0}
      [ "$c" = poll_cq_empty ] || all=$((all + n))
      per_io_2 "$n" "$ios"; out="$out
${k}_calls_$c=$n
${k}_calls_${c}_per_io=$V2"
    done
    per_io_2 "$all" "$ios"
    out="$out
${k}_calls_all_per_io=$V2"
  fi
  echo "$out" >> "$LAB_OUT/results.properties"
  echo "$out" > "$LAB_LOGS/$name.results"
  lab_log "$name: ${iops} IOPS, ${ios} I/Os, error $err"
  [ "$err" = 0 ] || { lab_log "fio $name reported error $err"; return 1; }
  [ "$ios" -gt 0 ] || { lab_log "fio $name did no I/O"; return 1; }
}

# --- the link's own ceiling (perftest over rdma_cm) ----------------------------------------------------------

# link_ceiling TOOL KEY: 10,000 RDMA operations of 4 KiB (a count, not -D: perftest 4.5's duration mode reported
# 0 MB/s for READ once), server on rxe0. The server says nothing until a client came (its stdout is a file:
# buffered), so readiness is its listening cm_id. With -R the client's --source_ip does not bind the cm_id (both
# GIDs print as 10.77.0.1): the test runs over rxe0's loopback, without the veth hop: an upper bound on the link.
link_ceiling() {
  local tool=$1 key=$2 line
  start_bg "perftest-$key-server" "$tool" -d "${LAB_TARGET_IBDEV:-rxe0}" -R -F -s 4096 -n 10000 -p 18515
  wait_for "rdma resource show cm_id | grep -q 'LISTEN.*:18515'" 30 "perftest server listening" \
    || { stop_bg "perftest-$key-server" 5; return 1; }
  run_step "perftest-$key" 90 "$tool" -d "${LAB_HOST_IBDEV:-rxe1}" -R -F -s 4096 -n 10000 -p 18515 --source_ip "$LAB_HOST_ADDR" \
    "$LAB_TARGET_ADDR" > /dev/null
  wait_for "! bg_alive perftest-$key-server" 30 "perftest server exits" || stop_bg "perftest-$key-server" 5
  # "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]"
  line=$(awk '$1 == 4096 && NF >= 5 { print; exit }' "$LAB_LOGS/perftest-$key.log")
  [ -n "$line" ] || return 1
  lab_result "link_${key}_mbps" "$(echo "$line" | awk '{ print $4 }')"
  lab_result "link_${key}_msgs" "$(echo "$line" | awk '{ printf "%.0f", $5 * 1e6 }')"
}

# --- both targets up: the daemon's JVM starts while the kernel target is set up and warmed ---------------------

# PERF_TRANSPORT: the daemon's transport keys, "key: value" pairs separated by commas (for example
# "busy_poll: 0us, zero_copy: true"), to compare settings run after run; the defaults when unset.
TRANSPORT_YAML=""
if [ -n "${PERF_TRANSPORT:-}" ]; then
  TRANSPORT_YAML="transport:"
  IFS=',' read -ra PERF_KV <<< "$PERF_TRANSPORT"
  for kv in "${PERF_KV[@]}"; do TRANSPORT_YAML+=$'\n'"  ${kv# }"; done
fi
lab_result daemon_transport "${PERF_TRANSPORT:-defaults}"
lab_result daemon_java_opts "${PERF_JAVA_OPTS:-defaults}"
cat > "$CFG" <<YAML
$TRANSPORT_YAML
subsystems:
  - nqn: $DNQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: ${SIZE_MB}MiB
ports:
  - id: 1
    traddr: $LAB_TARGET_ADDR
    trsvcid: $DPORT
    subsystems: [$DNQN]
logging:
  format: plain
YAML
cp "$CFG" "$LAB_LOGS/perf-daemon.yaml"
PROFILE_OPTS=""
[ -n "${PERF_PROFILE:-}" ] && PROFILE_OPTS="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"
lab_result daemon_profile "${PERF_PROFILE:-none}"
B=${NVMF_BUILD_DIR:-target}
JAR=$(ls "$LAB_REPO/target-daemon/$B"/target-daemon-*.jar 2>/dev/null | head -n1)
# (Entry names are stored uncompressed in a jar: grep finds them without starting a JVM, slow under TCG.)
if [ -n "$JAR" ] && [ -d "$LAB_REPO/target-daemon/$B/lib" ] && \
   grep -aq 'dev/nvmf/target/daemon/DaemonRuntime.class' "$JAR"; then
  lab_result launcher bin/nvmf-target
  # The AOT cache (if the build trained one) unless PERF_AOT=0; whether the JVM read it: daemon_aot_cache.
  start_bg daemon env NVMF_BUILD_DIR="$B" NVMF_JAVA_HOME="$LAB_JAVA_HOME" NVMF_AOT="${PERF_AOT:-1}" \
    NVMF_JAVA_OPTS="-XX:-UsePerfData -Xlog:class+path=info:file=$LAB_LOGS/daemon-class-path.log $PROFILE_OPTS ${PERF_JAVA_OPTS:-}" \
    "$LAB_REPO/bin/nvmf-target" serve --config "$CFG"
else
  lab_result launcher classpath
  lab_java_check || lab_die "no java"
  # shellcheck disable=SC2086 # PERF_JAVA_OPTS is a list of options
  start_bg daemon "$LAB_JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:-UsePerfData $PROFILE_OPTS ${PERF_JAVA_OPTS:-} \
    -cp "$LAB_CLASSPATH" dev.nvmf.target.cli.Main serve --config "$CFG"
fi

nullblk_create 1 || lab_die "null_blk"
ktarget_subsys "$KNQN" /dev/nullb0 || lab_die "nvmet subsystem"
ktarget_port 1 "$LAB_TARGET_ADDR" "$KPORT" "$KNQN" || lab_die "nvmet port"
nvme_connect_rdma "$KNQN" "$LAB_TARGET_ADDR" "$KPORT" || lab_die "nvme connect (kernel target)"
KDEV=$(nvme_ns_dev_for "$KNQN" 60) || lab_die "no namespace device for $KNQN"

# warm_up TARGET DEV: fio randrw (not reported): JIT compiles the daemon's I/O path; pools and caches fill.
warm_up() {
  fio_run "fio-$1-warmup" "$(($3 * 6 + 90))" --filename="$2" --ioengine=libaio --direct=1 --rw=randrw \
    --bs=4k --iodepth=32 --time_based --runtime="$3" --size="${SIZE_MB}M" --norandommap > /dev/null \
    || lab_die "warm-up on $1"
  [ "$FIO_ERROR" = 0 ] || lab_die "warm-up on $1: fio error $FIO_ERROR"
}
warm_up kernel "$KDEV" "$WARMUP"

wait_for_log daemon 'listening on rdma' 180 || lab_die "the daemon did not start listening"
# The java process: start_bg's pid once env and the launcher have exec'd (a child of it otherwise).
DPID=$(bg_pid daemon)
if [ "$(cat "/proc/$DPID/comm" 2>/dev/null)" != java ]; then
  for s in /proc/[0-9]*/stat; do
    set -- $(sed 's/^\([0-9]*\) (\(.*\)) \(.\) \([0-9]*\).*/\1 \2 \4/' "$s" 2>/dev/null)
    [ "${3:-}" = "$DPID" ] && [ "${2:-}" = java ] && { DPID=$1; break; }
  done
fi
[ "$(cat "/proc/$DPID/comm" 2>/dev/null)" = java ] || lab_die "cannot find the daemon's java process"
lab_result daemon_pid "$DPID"
# PERF_POLLER_CPUS=LIST: the daemon's poller threads pinned to those vCPUs (taskset -pc LIST), PERF_FIO_CPUS=LIST:
# every measured fio job (both targets) on those (--cpus_allowed). Unset, the guest's scheduler places both, and it
# may put the poller on fio's vCPU or on the other one, from job to job.
if [ -n "${PERF_POLLER_CPUS:-}" ]; then
  n=0
  for t in /proc/"$DPID"/task/*; do
    read -r c < "$t/comm" 2>/dev/null || continue
    [[ $c == nvmf-rdma-poll* ]] || continue
    taskset -pc "$PERF_POLLER_CPUS" "${t##*/}" > /dev/null || lab_die "taskset"
    n=$((n + 1))
  done
  lab_result daemon_pollers_pinned "$n"
  [ "$n" -gt 0 ] || lab_die "no poller thread to pin"
fi
lab_result daemon_poller_cpus "${PERF_POLLER_CPUS:-any}"
lab_result fio_cpus "${PERF_FIO_CPUS:-any}"
if grep -q 'Reading classpath(s) from .*nvmf-target\.aot' "$LAB_LOGS/daemon-class-path.log" 2>/dev/null; then
  lab_result daemon_aot_cache 1
else
  lab_result daemon_aot_cache 0
fi
nvme_connect_rdma "$DNQN" "$LAB_TARGET_ADDR" "$DPORT" || lab_die "nvme connect (daemon)"
DDEV=$(nvme_ns_dev_for "$DNQN" 60) || lab_die "no namespace device for $DNQN"
# The JVM's JIT compilers are slow under emulation: the daemon gets a longer warm-up, with every measured job's
# pattern (each has its own profile: QD1 wakes the poller from its channel, 128 KiB reads post several WRITEs),
# then randrw. What remains of their work shows as JIT CPU per I/O in the table.
for job in $JOBS; do
  job_opts "$job"
  run_step "fio-daemon-warmup-$job" "$JOB_LIMIT" fio --name="warmup-$job" --filename="$DDEV" --ioengine=libaio \
    --direct=1 "${OPTS[@]}" --time_based --runtime="$(( (DAEMON_WARMUP + 7) / 8 ))" --size="${SIZE_MB}M" \
    --norandommap > /dev/null || lab_die "warm-up ($job) on the daemon"
done
warm_up daemon "$DDEV" "$(( (DAEMON_WARMUP + 1) / 2 ))"
# Then until the JIT compilers' queue has drained: their CPU time unchanged for 3 s (bounded; the JIT CPU per I/O
# in the table shows what is still compiled during the jobs).
jit_cpu() { threads_cpu "$1" "C1 Compiler"; local c=$Q; threads_cpu "$1" "C2 Compiler"; JIT=$((c + Q)); }
JIT_LAST=-1 JIT_SINCE=0
jit_quiet() {
  local now; jit_cpu "$DPID"; read -r now _ < /proc/uptime
  if [ "$JIT" != "$JIT_LAST" ]; then JIT_LAST=$JIT; JIT_SINCE=$now; return 1; fi
  [ "${now%.*}" -ge $(( ${JIT_SINCE%.*} + 3 )) ]
}
T1=$(cut -d' ' -f1 /proc/uptime)
wait_for jit_quiet 60 "the daemon's JIT compilers are idle" || lab_log "JIT still busy: measuring anyway"
lab_result daemon_jit_settle_s "$(lab_elapsed "$T1")"
lab_result kernel_dev "$KDEV"
lab_result daemon_dev "$DDEV"
lab_result kernel_ctrl_address "$(cat "/sys/class/nvme/$(nvme_ctrl_for "$KNQN")/address")"
lab_result daemon_ctrl_address "$(cat "/sys/class/nvme/$(nvme_ctrl_for "$DNQN")/address")"

# --- the measured jobs, alternating targets ------------------------------------------------------------------

declare -A TH0=() TH1=()
thread_groups "$DPID" TH0
T0=$(cut -d' ' -f1 /proc/uptime)
for job in $JOBS; do
  run_job kernel "$job" "$KDEV" || lab_die "kernel target: $job"
  run_job daemon "$job" "$DDEV" "$DPID" || lab_die "daemon: $job"
done
lab_result jobs_s "$(lab_elapsed "$T0")"
thread_groups "$DPID" TH1
# Where the daemon's CPU went over all its measured jobs (and the idle gaps between them), by thread group.
for n in "${!TH1[@]}"; do echo "$(( ${TH1[$n]} - ${TH0[$n]:-0} )) $n"; done | sort -rn \
  > "$LAB_LOGS/daemon-threads-cpu.txt"
lab_result jobs_ok 1
if [ "${PERF_TRACE:-0}" = 1 ]; then
  trace_qd1 kernel "$KDEV" || lab_log "trace (kernel target) failed"
  trace_qd1 daemon "$DDEV" || lab_log "trace (daemon) failed"
fi

lab_collect_logs
nvme_disconnect "$KNQN" || lab_die "nvme disconnect (kernel target)"
nvme_disconnect "$DNQN" || lab_die "nvme disconnect (daemon)"
stop_bg daemon 60
RC=$?
lab_result daemon_exit "$RC"
profile_reports
ktarget_teardown

if [ "${PERF_PERFTEST:-1}" != 0 ]; then
  link_ceiling ib_write_bw write4k || lab_log "perftest ib_write_bw gave no result (see logs/perftest-write4k.log)"
  link_ceiling ib_read_bw read4k || lab_log "perftest ib_read_bw gave no result (see logs/perftest-read4k.log)"
fi

# --- the table -----------------------------------------------------------------------------------------------

R=$LAB_OUT/results.properties
val() { awk -F= -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? "-" : v) }' "$R"; }
# both_row JOB LABEL KEY: a table row with both targets' <target>_JOB_KEY and their ratio
both_row() { local k d; k=$(val "kernel_$1_$3"); d=$(val "daemon_$1_$3"); echo "| $1 | $2 | $k | $d | $(ratio "$d" "$k") |"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
{
  if [ "${LAB_HW:-0}" = 1 ]; then
    echo "# perf-compare: kernel nvmet-rdma (null_blk) vs nvmf-target daemon (RAM), one run, same RDMA device"
    echo
    echo "No emulation: $(hostname), $(nproc) CPUs, kernel $(uname -r), device ${LAB_TARGET_IBDEV:-?}, targets on"
    echo "$LAB_TARGET_ADDR, host from $LAB_HOST_ADDR (${LAB_HOST_IBDEV:-?}); ${RUNTIME} s per job. \"guest\" rows are the"
    echo "whole machine's CPU; the emulator's rows are empty. Ratio = daemon / kernel."
  else
    echo "# perf-compare: kernel nvmet-rdma (null_blk) vs nvmf-target daemon (RAM), one boot, same rxe link"
    echo
    echo "TCG emulation, guest $(nproc) vCPUs, kernel $(uname -r); ${RUNTIME} s per job; numbers are ~1000x below"
    echo "hardware: compare the two columns (ratio = daemon / kernel), never the absolute values."
  fi
  echo
  echo "| job | metric | kernel | daemon | daemon/kernel |"
  echo "|---|---|---|---|---|"
  for job in $JOBS; do
    m=iops; [ "$job" = seqread128k_qd8 ] && m=mbps
    both_row "$job" "$m" "$m"
    if [ "$job" = randread4k_qd1 ]; then
      for l in clat_mean_us clat_p50_us clat_p99_us slat_mean_us lat_mean_us lat_p50_us lat_p99_us; do
        both_row "$job" "$l" "$l"
      done
    fi
    both_row "$job" "guest CPU us/IO (all)" guest_cpu_us_per_io
    both_row "$job" "emulator CPU us/IO (the host's count of qemu)" emulator_cpu_us_per_io
    both_row "$job" "emulator busy, % of the job's wall time" emulator_busy_pct
    echo "| $job | target process CPU us/IO | n/a (kworkers) | $(val "daemon_${job}_proc_cpu_us_per_io") | |"
    both_row "$job" "guest CPU us/IO in user mode" guest_user_cpu_us_per_io
    both_row "$job" "guest CPU us/IO in system calls and kernel threads" guest_sys_cpu_us_per_io
    both_row "$job" "guest CPU us/IO in interrupts and softirqs" guest_irq_cpu_us_per_io
    echo "| $job | poller threads CPU us/IO | n/a | $(val "daemon_${job}_poller_cpu_us_per_io") | |"
    echo "| $job | of it in user mode / in the kernel | n/a | $(val "daemon_${job}_poller_user_cpu_us_per_io") /" \
      "$(val "daemon_${job}_poller_sys_cpu_us_per_io") | |"
    echo "| $job | verbs downcalls per I/O (poll_cq, of them empty, post_send, post_recv, req_notify_cq," \
      "get_cq_event, epoll_wait; all) | n/a | $(val "daemon_${job}_calls_poll_cq_per_io"), $(val \
      "daemon_${job}_calls_poll_cq_empty_per_io"), $(val "daemon_${job}_calls_post_send_per_io"), $(val \
      "daemon_${job}_calls_post_recv_per_io"), $(val "daemon_${job}_calls_req_notify_cq_per_io"), $(val \
      "daemon_${job}_calls_get_cq_event_per_io"), $(val "daemon_${job}_calls_epoll_wait_per_io"); $(val \
      "daemon_${job}_calls_all_per_io") | |"
    echo "| $job | JIT compiler threads CPU us/IO | n/a | $(val "daemon_${job}_jit_cpu_us_per_io") | |"
    both_row "$job" "guest context switches per I/O (all vCPUs, kernel threads' among them)" ctxt_per_io
    both_row "$job" "emulator: new translated code, KiB over the job" tcg_code_kib
    both_row "$job" "emulator: translation blocks invalidated per I/O (guest writes to code pages)" \
      tcg_tb_invalidate_per_io
    both_row "$job" "emulator: translation buffer flushes over the job" tcg_tb_flush
    both_row "$job" "emulator: whole-TLB flushes per I/O with every MMU mode in use (QEMU's full)" tcg_tlb_full_per_io
    both_row "$job" "emulator: TLB flushes per I/O, one per MMU mode (QEMU's partial: address-space switches x 2-4)" \
      tcg_tlb_partial_per_io
    both_row "$job" "link packets per I/O (both rxe devices)" link_pkts_per_io
    for l in completer_retry_err rcvd_seq_err duplicate_request rcvd_rnr_err backlog_dropped; do
      both_row "$job" "link: $l (over the job)" "link_$l"
    done
  done
  echo
  echo "Link ceiling (perftest -R, 4 KiB, over ${LAB_TARGET_IBDEV:-rxe0} loopback: an upper bound):"
  echo "RDMA WRITE $(val link_write4k_msgs) msg/s ($(val link_write4k_mbps) MB/s)," \
    "RDMA READ $(val link_read4k_msgs) msg/s ($(val link_read4k_mbps) MB/s)."
  echo
  echo "Daemon CPU by thread group over the measured section (its jobs and the kernel's in between), top 6:"
  awk '{ t += $1; n[NR] = $0 } END { for (i = 1; i <= 6 && i <= NR; i++) { split(n[i], f, " "); v = f[1];
         sub(/^[0-9]+ /, "", n[i]); printf "%s%s %.0f%%", (i > 1 ? ", " : ""), n[i], t ? 100 * v / t : 0 } print "" }' \
    "$LAB_LOGS/daemon-threads-cpu.txt"
} > "$TABLE"
cat "$TABLE"
[ "$RC" = 0 ] || lab_die "daemon exit status $RC after SIGTERM"
echo "perf-compare: PASS"
