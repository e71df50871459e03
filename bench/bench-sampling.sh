#!/usr/bin/env bash
# Sampling overhead, measured side by side in one run: the same tas workload without sampling,
# with lockprof's sampler at its default rate (--sample, 1000 Hz), and under
# `perf record -e cpu-clock` at the same rate. Rounds interleave the three so drift of a shared
# machine hits all alike. Prints medians and the ratios; target: lockprof sampling costs at
# most 3% of throughput.
#
# usage: bench/bench-sampling.sh [BUILD_DIR] [ROUNDS] [SAMPLER]
#   BUILD_DIR  folder holding the lockprof binary (default: build)
#   ROUNDS     interleaved rounds (default: 5)
#   SAMPLER    auto, perf or timer (default: auto)
set -euo pipefail

build=${1:-build}
rounds=${2:-5}
sampler=${3:-auto}
lockprof="$build/lockprof"
[[ -x $lockprof ]] || { echo "bench-sampling: no lockprof in '$build'; build it first" >&2; exit 2; }
rate=1000  # lockprof's default --sample-freq
workload=(--lock tas --threads 2 --duration 1s --trials 1 --no-counters --quiet --no-explain)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have_perf=0
if command -v perf >/dev/null && perf record -q -e cpu-clock -F "$rate" -o "$tmp/probe.data" -- true \
        >/dev/null 2>&1; then
    have_perf=1
fi

throughput() {  # JSON result -> acquires/s of the single cell
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["summary"]["acquires_per_second"]["median"])' "$1"
}

: >"$tmp/none"; : >"$tmp/sample"; : >"$tmp/perf"
for ((round = 1; round <= rounds; round++)); do
    "$lockprof" "${workload[@]}" -o "$tmp/none.json"
    throughput "$tmp/none.json" >>"$tmp/none"
    "$lockprof" "${workload[@]}" --sample --sampler "$sampler" -o "$tmp/sample.json"
    throughput "$tmp/sample.json" >>"$tmp/sample"
    if ((have_perf)); then
        perf record -q -g -e cpu-clock -F "$rate" -o "$tmp/perf.data" -- \
            "$lockprof" "${workload[@]}" -o "$tmp/perf.json" >/dev/null 2>&1
        throughput "$tmp/perf.json" >>"$tmp/perf"
    fi
    echo "round $round/$rounds done" >&2
done

python3 - "$tmp" "$have_perf" "$sampler" <<'PY'
import statistics, sys
tmp, have_perf, sampler = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
def load(name):
    return [float(x) for x in open(f"{tmp}/{name}") if x.strip()]
none, sample = load("none"), load("sample")
def show(label, values):
    print(f"  {label:<38} median {statistics.median(values)/1e6:8.2f} M acquires/s "
          f"(min {min(values)/1e6:.2f}, max {max(values)/1e6:.2f}, {len(values)} rounds)")
print("tas, 2 threads, 1 s per round, rounds interleaved:")
show("no sampling", none)
show(f"lockprof --sample ({sampler}, 1000 Hz)", sample)
base = statistics.median(none)
ratio = statistics.median(sample) / base
print(f"  lockprof sampling / none:              {ratio:.3f}  ({(1 - ratio) * 100:+.1f}% throughput loss; target <= 3%)")
if have_perf:
    perf = load("perf")
    show("perf record -g -e cpu-clock -F 1000", perf)
    print(f"  perf record / none:                    {statistics.median(perf) / base:.3f}")
    print(f"  lockprof sampling / perf record:       {statistics.median(sample) / statistics.median(perf):.3f}")
else:
    print("  perf record: not run (perf missing or not permitted here)")
PY
