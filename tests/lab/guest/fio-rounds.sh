#!/bin/bash
# fio in rounds until a file disappears (lib.sh: fio_rounds_bg / fio_rounds_stop).
#   fio-rounds.sh RUNFILE LOGPREFIX FIO-OPTIONS...
# Each round is one `fio --output-format=terse,normal FIO-OPTIONS...` with its output in LOGPREFIX-N.log, and one
# line on stdout: "round N rc R errors E seconds S" (E: the jobs' error fields, terse field 5, summed; "none" when
# fio printed no result, counted as a failure by the reader). Rounds go on after a failed one: the reader judges.
run=$1 prefix=$2
shift 2
n=0
while [ -e "$run" ]; do
  n=$((n + 1))
  t0=$(cut -d' ' -f1 /proc/uptime)
  fio --output-format=terse,normal "$@" > "$prefix-$n.log" 2>&1 < /dev/null
  rc=$?
  e=$(awk -F';' '/^3;fio-/ { k++; s += $5 } END { if (k) print s; else print "none" }' "$prefix-$n.log")
  [ "$e" = none ] && { e=1; [ $rc -eq 0 ] && rc=255; }
  echo "round $n rc $rc errors $e seconds $(awk -v t0="$t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime)"
done
