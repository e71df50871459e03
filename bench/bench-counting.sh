#!/usr/bin/env bash
# Counting overhead of the PMU module (not a test; prints numbers). Side by side in one run, for
# `tas` at 1 and 2 threads: throughput with the default events (on a VM without a PMU that is
# the software task_clock + context_switches) vs --no-counters, interleaved run by run so
# machine noise hits both alike, as medians of RUNS runs and their ratio (target: >= 0.99).
# For reference, the same workload under `perf stat -e task-clock` (linux-perf), which counts
# the whole process from outside.
# Usage: bench/bench-counting.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
lockprof=$build/lockprof
runs=${RUNS:-7}
duration=${DURATION:-300ms}
[[ -x $lockprof ]] || { echo "bench-counting: $lockprof missing; build with: ninja -C $build lockprof" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# acquires/s of one lockprof run (median of its own trials), from its CSV.
throughput() {
  local csv=$work/run.csv
  "$lockprof" --lock=tas --duration="$duration" --trials=1 -q --csv "$csv" "$@" 2>/dev/null
  awk -F, 'NR == 2 { print $9 }' "$csv"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-8s %16s %16s %16s %8s %8s\n' threads counters no-counters "perf stat" ratio perf/none
for threads in 1 2; do
  : >"$work/with"; : >"$work/without"; : >"$work/perf"
  for ((i = 0; i < runs; ++i)); do
    throughput --threads="$threads" >>"$work/with"
    throughput --threads="$threads" --no-counters >>"$work/without"
    if command -v perf >/dev/null; then
      perf stat -e task-clock -x, -o "$work/perf.stat" -- \
        "$lockprof" --lock=tas --threads="$threads" --duration="$duration" --trials=1 -q \
        --no-counters --csv "$work/perf.csv" 2>/dev/null
      awk -F, 'NR == 2 { print $9 }' "$work/perf.csv" >>"$work/perf"
    fi
  done
  with=$(median <"$work/with")
  without=$(median <"$work/without")
  perf_median=$( [[ -s $work/perf ]] && median <"$work/perf" || echo nan)
  awk -v t="$threads" -v a="$with" -v b="$without" -v p="$perf_median" 'BEGIN {
    printf "%-8s %16.0f %16.0f %16s %8.3f %8s\n", t, a, b, (p == "nan" ? "n/a" : sprintf("%.0f", p)),
           a / b, (p == "nan" ? "n/a" : sprintf("%.3f", p / b)) }'
done
echo
echo "acquires/s, median of $runs runs of $duration each; ratio = counters / no-counters"
echo "(1.000: no measurable overhead). perf/none: the same run under perf stat -e task-clock."
"$lockprof" --lock=tas --threads=1 --duration=50ms --trials=1 -q 2>&1 >/dev/null | sed 's/^/events here: /' || true
