#!/usr/bin/env bash
# Builds the benchmarks (tests module, dev.nvmf.tests.bench) and runs the JMH benchmark of the target's per-I/O
# CPU cost on the in-process soft fabric (no VM, no RDMA device): ns per I/O and, with -prof gc, bytes per I/O.
# Short settings for a shared 2-core machine; results also as JSON in $NVMF_BUILD_DIR/bench/.
#
#   scripts/bench.sh                    # build, then: all ops with the daemon's metrics; read/write without
#   scripts/bench.sh -f 3 -i 10         # anything after the script name goes to JMH (replaces the defaults)
#   NVMF_BENCH_SKIP_BUILD=1 scripts/bench.sh ...
#   scripts/bench.sh lab                # instead: the lab comparison, kernel nvmet-rdma vs the daemon in one VM boot
#                                       # (PerfCompareLabTest, tag perf; about 4-7 minutes; docs/performance.md)
#   scripts/bench.sh aot                # the AOT cache: start-up to READY and the I/Os of every second after it,
#                                       # without and with the cache, on the soft fabric (no VM; NVMF_AOT_ROUNDS=5
#                                       # rounds of NVMF_AOT_SECONDS=20 s each by default; about 4 minutes)
#   scripts/bench.sh scaling            # the scaling curve: the target's share per 4 KiB I/O over 1-64 connections
#                                       # (QD 32 each) and 1-2 pollers, read and keyed write (about 8 minutes);
#                                       # SCALING_SRQ_DEPTH=0,4096: without and with a shared receive queue (twice as long)
#   scripts/bench.sh aot-lab            # the same for the daemon in the lab VM, fio from the Linux host (scenario
#                                       # aot-warmup, under the lab lock; AOT_ROUNDS=1 AOT_RUNTIME=60; ~6 minutes)
#   sudo scripts/bench.sh hw            # on a machine with a real RDMA NIC: the lab comparison without a VM, over the
#                                       # NIC (tests/lab/hw.sh perf-compare; 30 s jobs, PERF_RUNTIME; about 6 minutes).
#                                       # Options after "hw" go to hw.sh: --device DEV --addr IP --host-addr IP
#                                       # (default: the first device with an address, loopback through it);
#                                       # docs/performance.md, "On a real RDMA NIC"
#
# The benchmarks alone, once built:
#   java -cp "tests/target/tests-0.1.0-SNAPSHOT.jar:tests/target/bench-lib/*" org.openjdk.jmh.Main -l
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=env.sh
. scripts/env.sh
B=${NVMF_BUILD_DIR:-target}
if [ "${1:-}" = lab ]; then
  # The daemon runs from its packaged jar in the guest, as systemd would start it.
  mvn -B -q -DbuildDir="$B" -pl tests -am package -DskipTests
  exec mvn -B -DbuildDir="$B" -pl tests -am test -Dgroups=perf -DexcludedGroups=none -Dtest=PerfCompareLabTest \
    -Dsurefire.failIfNoSpecifiedTests=false
fi
if [ "${1:-}" = hw ]; then
  shift
  # Where it cannot run, say why before building (hw.sh check: exit 77 with the reason).
  tests/lab/hw.sh check "$@" || exit $?
  # The daemon runs from its packaged jar, with the AOT cache the package step trains, as systemd would start it.
  [ -n "${NVMF_BENCH_SKIP_BUILD:-}" ] || mvn -B -q -DbuildDir="$B" -pl tests -am package -DskipTests
  echo "# bench.sh hw: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  # (The scenario's other knobs, PERF_TRANSPORT among them, reach it from the environment: sudo -E.)
  exec tests/lab/hw.sh --env NVMF_BUILD_DIR="$B" --env PERF_RUNTIME="${PERF_RUNTIME:-30}" "$@" perf-compare
fi
if [ "${1:-}" = aot-lab ]; then
  [ -n "${NVMF_BENCH_SKIP_BUILD:-}" ] || mvn -B -q -DbuildDir="$B" -pl tests -am package -DskipTests
  echo "# bench.sh aot-lab: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exec flock /tmp/nvmf-lab.lock tests/lab/lab.sh --timeout 1800 --env NVMF_BUILD_DIR="$B" \
    --env AOT_ROUNDS="${AOT_ROUNDS:-1}" --env AOT_RUNTIME="${AOT_RUNTIME:-60}" aot-warmup
fi
if [ -z "${NVMF_BENCH_SKIP_BUILD:-}" ]; then
  mvn -B -q -DbuildDir="$B" -pl tests -am package -DskipTests
fi
if [ "${1:-}" = aot ]; then
  # The training workload in its measuring mode, started as the daemon is (bin/nvmf-target), alternately without
  # (NVMF_AOT=0) and with the cache; each prints "ready N ms", "connected N ms" after the launch and the I/Os of
  # every second.
  KIT="$(ls tests/"$B"/tests-*.jar | head -n1):$(ls tests/"$B"/bench-lib/verbs-ffm-*-tests.jar | head -n1)"
  OUT=$B/bench/aot
  mkdir -p "$OUT"
  rm -f "$OUT"/*.txt
  echo "# bench.sh aot: $(date -u +%FT%TZ), $(nproc) CPUs, $("$JAVA_HOME/bin/java" -version 2>&1 | head -n1)" \
    | tee "$OUT/environment.txt"
  for r in $(seq "${NVMF_AOT_ROUNDS:-5}"); do
    if [ $((r % 2)) = 1 ]; then order="0 1"; else order="1 0"; fi
    for a in $order; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      NVMF_BUILD_DIR=$B NVMF_AOT=$a bin/nvmf-target --kit "$KIT" dev.nvmf.tests.aot.AotTraining measure \
        "${NVMF_AOT_SECONDS:-20}" "$(date +%s%3N)" > "$OUT/aot$a-$r.txt" 2> "$OUT/aot$a-$r.log"
      echo "load $load" >> "$OUT/aot$a-$r.txt"
      echo "round $r, cache $a: $(grep -o 'ready [0-9]* ms' "$OUT/aot$a-$r.txt"), load average before $load"
    done
  done
  python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import glob, re, statistics, sys
out = sys.argv[1]
mark = lambda name, t: [int(x) for x in re.search(name + r" (\d+) ms, cpu (-?\d+) ms, jit (-?\d+) ms", t).groups()]
print("wall and CPU milliseconds from the launch; medians over the runs, [min-max]; CPU per I/O counts the whole JVM"
      " (target, soft fabric and hosts)")
for a, label in (("0", "without the cache"), ("1", "with the cache")):
    runs = []
    for f in sorted(glob.glob("%s/aot%s-*.txt" % (out, a))):
        t = open(f).read()
        ready, conn = mark("ready", t), mark("connected", t)
        secs = [[int(x) for x in m] for m in re.findall(r"second \d+ (\d+) I/Os, cpu (-?\d+) ms, jit (-?\d+) ms", t)]
        load = float(re.search(r"load ([\d.]+)", t).group(1))
        runs.append(dict(ready=ready, conn=conn, secs=secs, load=load))
    if not runs:
        continue
    def stat(xs):
        return "%d [%d-%d]" % (statistics.median(xs), min(xs), max(xs))
    def per_io(r, lo, hi):  # CPU us per I/O over seconds lo+1..hi
        s = r["secs"]
        base = r["conn"][1] if lo == 0 else s[lo - 1][1]
        ios = sum(x[0] for x in s[lo:hi])
        return (s[hi - 1][1] - base) * 1000.0 / max(1, ios)
    n = min(len(r["secs"]) for r in runs)
    print("%s: %d runs at load %.1f-%.1f" % (label, len(runs), min(r["load"] for r in runs), max(r["load"] for r in runs)))
    print("  READY wall %s ms, CPU %s ms (JIT %s ms); hosts connected at %s ms" % (
        stat([r["ready"][0] for r in runs]), stat([r["ready"][1] for r in runs]), stat([r["ready"][2] for r in runs]),
        stat([r["conn"][0] for r in runs])))
    print("  I/Os in seconds 1-5 %s, per second after %s; CPU us per I/O in seconds 1-5 %s, 6-%d %s;"
          " JIT CPU in the %d s of I/O %s ms" % (
        stat([sum(x[0] for x in r["secs"][:5]) for r in runs]),
        stat([sum(x[0] for x in r["secs"][5:n]) // max(1, n - 5) for r in runs]),
        stat([per_io(r, 0, 5) for r in runs]), n, stat([per_io(r, 5, n) for r in runs]), n,
        stat([r["secs"][n - 1][2] - r["conn"][2] for r in runs])))
PY
  exit
fi
JAR=$(ls tests/"$B"/tests-*.jar | head -n1)
CP="$JAR:tests/$B/bench-lib/*"
OUT=$B/bench
mkdir -p "$OUT"
jmh() { "$JAVA_HOME/bin/java" -cp "$CP" org.openjdk.jmh.Main "$@"; }

if [ "${1:-}" = scaling ]; then
  # One thread runs the fabric, every poller and every host queue (manual soft fabric), so this is CPU per I/O as
  # connections and pollers grow, not parallel speed-up.
  echo "# bench.sh scaling: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/scaling.txt"
  for op in read writeKeyed; do
    jmh 'IoPathBenchmark.ioBreakdown' -p observer=metrics -p op=$op -p connections=1,4,16,64 -p pollers=1,2 \
      -p srqDepth="${SCALING_SRQ_DEPTH:-0}" \
      -f 1 -wi 3 -w 2 -i 4 -r 2 -rf json -rff "$OUT/scaling-$op.json" 2>&1 | tee -a "$OUT/scaling.txt" \
      | grep -E '^IoPathBenchmark.ioBreakdown(:pollerNs|:pollerBytes)? '
  done
  echo "# done: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/scaling.txt"
  exit
fi

{
  echo "# bench.sh: $(date -u +%FT%TZ), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)),"
  echo "# load average $(cut -d' ' -f1-3 /proc/loadavg), $("$JAVA_HOME/bin/java" -version 2>&1 | head -n1)"
} | tee "$OUT/environment.txt"

if [ $# -gt 0 ]; then
  jmh "$@"
  exit
fi
# 1. Every op with the daemon's metrics observer (as served): whole loop (io) and its breakdown (ioBreakdown),
#    allocation per I/O from -prof gc. 2 forks x 5 x 2 s measured after 3 x 2 s warm-up.
jmh 'IoPathBenchmark' -p observer=metrics -f 2 -wi 3 -w 2 -i 5 -r 2 -prof gc \
  -rf json -rff "$OUT/io-path-metrics.json" 2>&1 | tee "$OUT/io-path-metrics.txt"
# 2. The metrics' share: read and in-capsule write without an observer (whole loop only).
jmh 'IoPathBenchmark.io$' -p observer=none -p op=read,write -f 2 -wi 3 -w 2 -i 5 -r 2 \
  -rf json -rff "$OUT/io-path-none.json" 2>&1 | tee "$OUT/io-path-none.txt"
# Summary: on a shared machine the mean hides the quiet iterations; show min / median / mean per benchmark, and
# the breakdown counters (means) and allocation per I/O.
if command -v python3 > /dev/null; then
  python3 - "$OUT/io-path-metrics.json" "$OUT/io-path-none.json" <<'PY' | tee "$OUT/summary.txt"
import json, sys
print("%-12s %-9s %-11s %9s %9s %9s  %s" % ("benchmark", "observer", "op", "min", "median", "mean", "ns per I/O; extra"))
for path in sys.argv[1:]:
    for r in json.load(open(path)):
        raw = sorted(x for fork in r["primaryMetric"]["rawData"] for x in fork)
        sec = r.get("secondaryMetrics", {})
        extra = ", ".join(("%s %.2f" if "Bytes" in k or "alloc" in k else "%s %.0f") % (k, v["score"])
                          for k, v in sorted(sec.items())
                          if k in ("pollerNs", "fabricNs", "hostNs", "pollerBytes", "gc.alloc.rate.norm"))
        p = r["params"]
        print("%-12s %-9s %-11s %9.0f %9.0f %9.0f  %s" % (r["benchmark"].rsplit(".", 1)[1], p["observer"], p["op"],
              raw[0], raw[len(raw) // 2], r["primaryMetric"]["score"], extra))
PY
fi
echo "bench.sh: results in $OUT/"
