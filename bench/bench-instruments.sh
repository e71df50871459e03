#!/usr/bin/env bash
# What record's instruments cost a program, measured against what record says they cost:
# the spin helper (tests/cli/helpers/spin_helper.cpp: 1500 s_lock calls of a few microseconds)
# recorded with counters only, then with `--spin s_lock` (and, with --sample, sampled too),
# interleaved, ROUNDS times. The measured cost is the probed run's task_clock minus the plain
# run's (task_clock counts the time the kernel spends on the program's traps); the estimate is
# record's own, from its calibration (the JSON's instrument_cost: calibrated cost x calls).
# Prints each round's pair and the medians, and the estimate over the measurement.
#
# usage: bench/bench-instruments.sh [BUILD_DIR] [ROUNDS] [--sample]
#   BUILD_DIR  folder holding lockprof and tests/lockprof_spin_helper (default: build)
#   ROUNDS     interleaved rounds (default: 5)
set -euo pipefail

build=${1:-build}
rounds=${2:-5}
sample=()
[[ ${3:-} == --sample ]] && sample=(--sample)
lockprof="$build/lockprof"
helper="$build/tests/lockprof_spin_helper"
[[ -x $lockprof && -x $helper ]] ||
    { echo "bench-instruments: no lockprof or tests/lockprof_spin_helper in '$build'; build them first (ninja -C $build lockprof lockprof_spin_helper)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-instruments: ROUNDS '$rounds' is not a positive number" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench-instruments: needs python3 to read the JSON" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

task_clock() {  # the recording's task_clock total, ns
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(next(t["value"] for t in d["totals"] if t["event"] == "task_clock"))' "$1"
}

plain=() probed=() estimated=()
for ((i = 1; i <= rounds; i++)); do
    "$lockprof" record --quiet --output "$tmp/plain.json" -- "$helper" 0 0 >/dev/null
    "$lockprof" record --quiet --spin s_lock "${sample[@]}" --output "$tmp/probed.json" -- "$helper" 0 0 >/dev/null
    plain+=("$(task_clock "$tmp/plain.json")")
    probed+=("$(task_clock "$tmp/probed.json")")
    estimated+=("$(python3 -c 'import json,sys
c=json.load(open(sys.argv[1]))["instrument_cost"]
print((c["probes_ns"] or 0) + (c["sampling_ns"] or 0))' "$tmp/probed.json")")
    python3 -c 'import sys
i, plain, probed, estimate = sys.argv[1], *(float(x) / 1e6 for x in sys.argv[2:])
print(f"round {i}: task_clock plain {plain:.2f} ms, probed {probed:.2f} ms; "
      f"record estimated {estimate:.2f} ms of instruments")' "$i" "${plain[-1]}" "${probed[-1]}" "${estimated[-1]}"
done
python3 - "${plain[*]}" "${probed[*]}" "${estimated[*]}" <<'EOF'
import statistics, sys
plain, probed, estimated = ([float(x) for x in a.split()] for a in sys.argv[1:4])
measured = [p - q for p, q in zip(probed, plain)]
m, e = statistics.median(measured), statistics.median(estimated)
print(f"median: measured cost {m / 1e6:.2f} ms (probed - plain task_clock), "
      f"record's estimate {e / 1e6:.2f} ms: estimate / measured = {e / m:.2f}"
      if m > 0 else f"median: no measurable cost (probed - plain = {m / 1e6:.2f} ms)")
EOF
