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
if [ -z "${NVMF_BENCH_SKIP_BUILD:-}" ]; then
  mvn -B -q -DbuildDir="$B" -pl tests -am package -DskipTests
fi
JAR=$(ls tests/"$B"/tests-*.jar | head -n1)
CP="$JAR:tests/$B/bench-lib/*"
OUT=$B/bench
mkdir -p "$OUT"
jmh() { "$JAVA_HOME/bin/java" -cp "$CP" org.openjdk.jmh.Main "$@"; }

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
