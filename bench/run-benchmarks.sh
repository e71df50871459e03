#!/usr/bin/env bash
# lockprof's own overhead, measured side by side in one run (not a test: machines are noisy).
#   bench/run-benchmarks.sh [BUILD_DIR] [LOCKHAMMER_BUILD_DIR]
#   BASELINE=OTHER_BUILD_DIR bench/run-benchmarks.sh ...   also runs another lockprof build's
#                                                          tas and cas in the same rounds
# Prints the median of RUNS (default 7) alternating rounds, everything pinned to CPU 0
# (lockprof --pin 0, taskset for the others), one thread, 0.3 s each:
#   - uncontended `tas` and `cas` through lockprof (the default one shared line, which the
#     critical section increments) against the same atomics and the same increment in a bare
#     loop without the harness (bench/bare_loop.cpp), as ratios;
#   - `empty` (no lock, no shared line: the harness alone per iteration), and, with lockhammer's
#     build folder, lockhammer's `lh_empty -t 1 -c 0in -p 0in` (zero work as an instruction count: its `0ns` spends about 8 ns a call timing nothing) in the same rounds.
# Targets (issue 29): tas <= 1.03x bare, cas <= 1.05x bare, empty <= lh_empty.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
lh_dir="${2:-}"
lockprof="$build/lockprof"
bare="$build/bench/bare_loop"
runs=${RUNS:-7}
for tool in "$lockprof" "$bare"; do
  [[ -x $tool ]] || { echo "run-benchmarks: $tool missing; build it (ninja -C $build lockprof bare_loop)" >&2; exit 2; }
done
if [[ -n $lh_dir && ! -x $lh_dir/lh_empty ]]; then
  echo "run-benchmarks: $lh_dir/lh_empty missing; pass lockhammer's build folder (make NO_JSON=1 in benchmarks/lockhammer)" >&2
  exit 2
fi
if [[ -n ${BASELINE:-} && ! -x $BASELINE/lockprof ]]; then
  echo "run-benchmarks: BASELINE=$BASELINE has no lockprof" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ns per acquire of one 1-trial run: 1e9 / the cell's acquires per second.
lockprof_ns() {
  local binary=$1 lock=$2 lines=$3
  "$binary" --lock="$lock" --threads=1 --pin=0 --shared-lines="$lines" --duration=300ms \
    --trials=1 --no-counters --quiet --output "$work/r.json" >/dev/null
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(1e9 / d["cells"][0]["summary"]["acquires_per_second"]["median"])' "$work/r.json"
}

# lockhammer's own figure: 1e9 / locks per wall second, the last column of its summary row.
lockhammer_ns() {
  taskset -c 0 "$lh_dir/lh_empty" -t 1 -c 0in -p 0in -D 0.3 -Y >"$work/lh.out" 2>&1
  awk -F'|' '$1 ~ /^[0-9]/ && NF >= 4 {v = $NF} END {gsub(/ /, "", v); print 1e9 / v}' "$work/lh.out"
}

declare -A result
for _ in $(seq "$runs"); do
  result[empty]+="$(lockprof_ns "$lockprof" empty 0) "
  [[ -n $lh_dir ]] && result[lh_empty]+="$(lockhammer_ns) "
  for op in tas cas; do
    result[$op]+="$(lockprof_ns "$lockprof" $op 1) "
    result[bare_$op]+="$(taskset -c 0 "$bare" $op 0.3) "
    [[ -n ${BASELINE:-} ]] && result[base_$op]+="$(lockprof_ns "$BASELINE/lockprof" $op 1) "
  done
done
m() { tr ' ' '\n' <<<"${result[$1]}" | grep -v '^$' | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

echo "run-benchmarks: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), lockprof $("$lockprof" --version | head -1 | cut -d' ' -f2-)"
printf '%-44s %10s\n' "measure (median of $runs, 1 thread, CPU 0)" "ns/iter"
printf '%-44s %10.3f\n' "empty through lockprof (no shared line)" "$(m empty)"
[[ -n $lh_dir ]] && printf '%-44s %10.3f   empty / lh_empty %s (target <= 1)\n' \
  "lockhammer lh_empty" "$(m lh_empty)" "$(ratio "$(m empty)" "$(m lh_empty)")"
for op in tas cas; do
  target=1.03; [[ $op == cas ]] && target=1.05
  printf '%-44s %10.3f\n' "$op through lockprof (1 shared line)" "$(m $op)"
  printf '%-44s %10.3f   lockprof / bare %s (target <= %s)\n' "$op bare loop (1 shared line)" \
    "$(m bare_$op)" "$(ratio "$(m $op)" "$(m bare_$op)")" "$target"
  [[ -n ${BASELINE:-} ]] && printf '%-44s %10.3f   baseline / bare %s\n' \
    "$op through $BASELINE/lockprof" "$(m base_$op)" "$(ratio "$(m base_$op)" "$(m bare_$op)")"
done
