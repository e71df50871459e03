#!/usr/bin/env bash
# Sampling overhead, measured side by side in one run: the same tas workload without sampling,
# with lockprof's sampler at its default rate (--sample, 1000 Hz), and under
# `perf record -e cpu-clock` at the same rate. Rounds interleave the three so drift of a shared
# machine hits all alike. Prints medians and the ratios; target: lockprof sampling costs at
# most 3% of throughput.
#
# Then lockprof's own figure beside this external one: one `--sample` run of ROUNDS trials with
# the observer-effect check (each sampled trial paired with a plain twin in the same process,
# docs/sampling.md "The observer effect"), whose instr/plain ratio and interval are printed
# beside the rounds' sampled/none ratio with its interval (Welch t on the log values, 95%), and
# whether the two intervals overlap.
#
# usage: bench/bench-sampling.sh [BUILD_DIR] [ROUNDS] [SAMPLER]
#   BUILD_DIR  folder holding the lockprof binary (default: build)
#   ROUNDS     interleaved rounds, and the check's trials (default: 5)
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

throughput() {  # JSON result -> acquires/s of the single cell's measured (instrumented) trials
    python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["cells"][0]["trials"]
print(sum(th["acquires"] for x in t for th in x["threads"]) / sum(x["wall_ns"] for x in t) * 1e9)' "$1"
}

: >"$tmp/none"; : >"$tmp/sample"; : >"$tmp/perf"
for ((round = 1; round <= rounds; round++)); do
    "$lockprof" "${workload[@]}" -o "$tmp/none.json"
    throughput "$tmp/none.json" >>"$tmp/none"
    "$lockprof" "${workload[@]}" --sample --sampler "$sampler" --no-perturbation-check \
        -o "$tmp/sample.json"
    throughput "$tmp/sample.json" >>"$tmp/sample"
    if ((have_perf)); then
        perf record -q -g -e cpu-clock -F "$rate" -o "$tmp/perf.data" -- \
            "$lockprof" "${workload[@]}" -o "$tmp/perf.json" >/dev/null 2>&1
        throughput "$tmp/perf.json" >>"$tmp/perf"
    fi
    echo "round $round/$rounds done" >&2
done

echo "lockprof's own check: --sample --trials $rounds (each trial with a plain twin)" >&2
"$lockprof" --lock tas --threads 2 --duration 1s --trials "$rounds" --no-counters --quiet \
    --no-explain --sample --sampler "$sampler" -o "$tmp/check.json"

python3 - "$tmp" "$have_perf" "$sampler" <<'PY'
import json, math, statistics, sys
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

# Student's t, 0.975 quantile, by degrees of freedom (rounded down; 30 and more: 2.042 .. 1.96).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
def welch(base, other):  # ratio of geometric means, other / base, with its 95% interval
    lb, lo = [math.log(v) for v in base], [math.log(v) for v in other]
    vb, vo = statistics.variance(lb) / len(lb), statistics.variance(lo) / len(lo)
    diff = statistics.mean(lo) - statistics.mean(lb)
    se = math.sqrt(vb + vo)
    df = (vb + vo) ** 2 / (vb ** 2 / (len(lb) - 1) + vo ** 2 / (len(lo) - 1)) if se > 0 else 1e9
    t = T975[min(int(df), 30) - 1] if df < 30 else 1.96 + (2.042 - 1.96) * 30 / df
    return math.exp(diff), math.exp(diff - t * se), math.exp(diff + t * se)
cell = json.load(open(f"{tmp}/check.json"))["cells"][0]["summary"]
p = cell.get("perturbation")
print("observer effect of lockprof --sample, two ways:")
if len(none) >= 2 and len(sample) >= 2:
    r, lo, hi = welch(none, sample)
    print(f"  external, sampled runs / plain runs:   {r:.3f} [{lo:.3f}, {hi:.3f}] (95%, {len(none)} rounds)")
else:
    r = lo = hi = None
    print("  external: needs 2 rounds or more for an interval")
if p and p["interval"]:
    il, ih = p["interval"]["low"], p["interval"]["high"]
    print(f"  lockprof's own instr/plain:            {p['ratio']:.3f} [{il:.3f}, {ih:.3f}] "
          f"({p['level'] * 100:.0f}%, {p['trials']['instrumented']} pairs), {p['verdict']}")
    if lo is not None:
        print(f"  intervals {'overlap: the two agree' if lo <= ih and il <= hi else 'DO NOT overlap'}")
else:
    print("  lockprof's own instr/plain: not measured (no perturbation in the result)")
PY
