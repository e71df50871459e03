#!/usr/bin/env bash
# lockprof's own overhead, measured side by side in one run (not a test: machines are noisy).
#   bench/run-benchmarks.sh [BUILD_DIR]
# Prints the median of several runs of:
#   - `empty` (no lock): the harness cost per loop iteration;
#   - uncontended `tas` and `cas` (1 thread) through lockprof, and the same atomic instructions
#     in a bare loop without the harness (bench/bare_loop.cpp), as a ratio.
# Targets (issue 2): empty <= 3 ns per iteration; tas within 10% of the bare loop.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
lockprof="$build/lockprof"
bare="$build/bench/bare_loop"
runs=5

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ns per acquire from lockprof's CSV (wall_ns_per_acquire, column 12).
lockprof_ns() {
  local lock=$1 tmp
  tmp=$(mktemp)
  "$lockprof" --lock="$lock" --threads=1 --duration=300ms --trials=1 --quiet --csv "$tmp" >/dev/null
  awk -F, 'NR==2 {print $12}' "$tmp"
  rm -f "$tmp"
}

declare -A result
for i in $(seq $runs); do
  for lock in empty tas cas; do result[$lock]+="$(lockprof_ns $lock) "; done
  for op in tas cas; do result[bare_$op]+="$("$bare" $op 0.3) "; done
done
m() { tr ' ' '\n' <<<"${result[$1]}" | grep -v '^$' | median; }
empty=$(m empty); tas=$(m tas); cas=$(m cas); btas=$(m bare_tas); bcas=$(m bare_cas)
printf '%-34s %10s\n' "measure (median of $runs, 1 thread)" "ns/iter"
printf '%-34s %10.2f   (target <= 3 ns)\n' "empty (harness only)" "$empty"
printf '%-34s %10.2f\n' "tas through lockprof" "$tas"
printf '%-34s %10.2f\n' "tas bare loop" "$btas"
printf '%-34s %10.2f\n' "cas through lockprof" "$cas"
printf '%-34s %10.2f\n' "cas bare loop" "$bcas"
awk -v a="$tas" -v b="$btas" 'BEGIN {printf "tas lockprof / bare ratio           %10.3f   (target <= 1.10)\n", a/b}'
awk -v a="$cas" -v b="$bcas" 'BEGIN {printf "cas lockprof / bare ratio           %10.3f\n", a/b}'
