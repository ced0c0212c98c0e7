#!/usr/bin/awk -f
# Where a QD1 I/O's time goes, from a perf-compare trace (PERF_TRACE=1: logs/trace-TARGET-qd1.txt, the text of
# `perf script -F comm,tid,cpu,time,event,trace` over a QD1 fio job with scheduler, interrupt, system call and NVMe
# tracepoints):
#
#   awk -f tests/lab/qd1-timeline.awk /tmp/labN/logs/trace-daemon-qd1.txt
#
# fio's I/O cycle is one io_submit (the host driver posts the command inside it: nvme_setup_cmd) then one
# io_getevents that returns its completion (nvme_complete_rq). Every cycle starts at fio's sys_enter_io_submit.
# The report gives:
# - the cycles, the mean cycle and the mean io_submit (what fio calls slat), and how many completions came before
#   io_submit returned;
# - the median of each phase of a cycle: io_submit; from its return to the target posting its response (the
#   kernel target's nvmet_req_complete, or the daemon's poller entering write(2): rxe's user-space post_send is a
#   write to the verbs device); from there to the host's nvme_complete_rq; from there to io_getevents returning;
#   and fio's own time until its next io_submit. Medians, because a few cycles in a hundred wait out a timer tick;
# - every kind of event seen in the cycles ("comm event detail", on fio's vCPU or the other one) with the share of
#   cycles that had it, its count per cycle, and the mean time of its first occurrence after the cycle's start.
# Under single-threaded TCG one emulator thread runs both vCPUs in turn: work on the other vCPU inside a phase
# (the recorder's own, a poller's spin) is time in which fio's vCPU did not run.
function field(s, name,    i, r) {
  i = index(s, name "=")
  if (i == 0) return ""
  r = substr(s, i + length(name) + 1)
  sub(/ .*/, "", r)
  return r
}
# median of a[1..n] (sorts a in place; n is about a thousand: insertion sort will do)
function median(a, n,    i, j, x) {
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return a[int((n + 1) / 2)]
}
{
  # "COMM TID [CPU] TIME: EVENT: TRACE"; COMM may hold spaces: find the "[CPU]" field.
  c = 0
  for (i = 2; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { c = i; break }
  if (c == 0 || c + 2 > NF) next
  comm = $1; for (i = 2; i < c - 1; i++) comm = comm " " $i
  tid = $(c - 1); cpu = substr($c, 2, length($c) - 2) + 0
  t = $(c + 1); sub(/:$/, "", t); t = t * 1000000
  ev = $(c + 2); sub(/:$/, "", ev)
  rest = ""; for (i = c + 3; i <= NF; i++) rest = rest " " $i
  detail = ""
  if (ev == "sched:sched_wakeup") detail = field(rest, "comm")
  else if (ev == "sched:sched_switch") detail = "next=" field(rest, "next_comm")
  else if (ev ~ /^irq:softirq/) { detail = rest; sub(/.*action=/, "", detail); sub(/\].*/, "", detail) }
  # fio's cycle: from one io_submit to the next, on the one fio thread that submits.
  if (ev == "syscalls:sys_enter_io_submit" && comm == "fio") {
    if (fiotid == "") fiotid = tid
    if (tid == fiotid) {
      close_cycle()
      open_c = 1; t0 = t; fiocpu = cpu; sub_exit = 0; posted = 0; done_at = 0; got = 0
      next
    }
  }
  if (!open_c) next
  if (ev == "syscalls:sys_exit_io_submit" && tid == fiotid && !sub_exit) sub_exit = t
  if (!posted && (ev == "nvmet:nvmet_req_complete" || (ev == "syscalls:sys_enter_write" && comm ~ /^nvmf-rdma-pol/)))
    posted = t
  if (ev == "nvme:nvme_complete_rq" && !done_at) done_at = t
  if (ev == "syscalls:sys_exit_io_getevents" && tid == fiotid && done_at) got = t
  key = comm " " ev (detail == "" ? "" : " " detail) (cpu == fiocpu ? " [fio's vCPU]" : " [other vCPU]")
  if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
  if (!(key in first)) first[key] = t - t0
  cnt[key]++
}
function close_cycle(    k) {
  if (!open_c) return
  if (sub_exit && done_at) {
    n++
    submit += sub_exit - t0
    cycle += t - t0
    if (done_at < sub_exit) early++
    if (posted && posted > sub_exit && done_at > posted && got) {
      np++
      ph_submit[np] = sub_exit - t0; ph_target[np] = posted - sub_exit; ph_back[np] = done_at - posted
      ph_reap[np] = got - done_at; ph_fio[np] = t - got; ph_cycle[np] = t - t0
    }
    for (k in first) { cyc_with[k]++; first_sum[k] += first[k]; cnt_sum[k] += cnt[k] }
  }
  for (k in first) delete first[k]
  for (k in cnt) delete cnt[k]
}
END {
  if (n == 0) { print "no complete QD1 cycles (fio's io_submit with an nvme_complete_rq) in the trace"; exit 1 }
  printf "cycles: %d; mean cycle %.1f us; mean io_submit (slat) %.1f us\n", n, cycle / n, submit / n
  printf "completion (nvme_complete_rq) before io_submit returned: %d of %d cycles\n", early, n
  if (np > 0) {
    printf "phase medians over %d cycles (us): io_submit %.1f; to the response posted %.1f; to the host's" \
      " completion %.1f; to io_getevents returning %.1f; fio until its next io_submit %.1f; cycle %.1f\n", np, \
      median(ph_submit, np), median(ph_target, np), median(ph_back, np), median(ph_reap, np), median(ph_fio, np), \
      median(ph_cycle, np)
  } else {
    print "phase medians: no cycle with a response posted (no nvmet_req_complete or poller write in the trace)"
  }
  print ""
  print "| first after cycle start (us) | share of cycles | per cycle | event |"
  print "|---|---|---|---|"
  fflush()
  for (i = 1; i <= nk; i++) {
    k = keys[i]
    if (cyc_with[k] * 20 < n) continue    # in fewer than 5% of the cycles: noise (timers, other daemons)
    printf "%.1f\t| %.1f | %.0f%% | %.2f | %s |\n", first_sum[k] / cyc_with[k], first_sum[k] / cyc_with[k], \
      100 * cyc_with[k] / n, cnt_sum[k] / n, k | "sort -n | cut -f2-"
  }
}
