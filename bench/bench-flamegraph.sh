#!/usr/bin/env bash
# Benchmarks `lockprof fold` + `lockprof flamegraph` (not a test; prints numbers).
#  1. Synthetic: 1,000,000 samples over 100,000 unique stacks in `perf script` text
#     (bench/gen_perf_script), folded and rendered by lockprof. Target: < 2 s.
#  2. Side by side on one real recording: `perf record -g` of a program whose calls walk
#     100,000 distinct 5-deep paths; linux-perf's `perf script report stackcollapse` vs
#     `perf script | lockprof fold` + `lockprof flamegraph`, and the ratio. Target: >= 5x.
#     A real 1M-sample recording takes minutes of CPU here, so the recording is shorter
#     (RECORD_SECONDS, default 8 s at 20 kHz) and both tools fold the same one.
#  3. End to end on the same recording, from perf.data: `lockprof fold perf.data` vs `perf
#     script report stackcollapse` and vs `perf script | lockprof fold`, with their folded
#     outputs compared. Target: >= 5x faster than stackcollapse, the same folded output.
#  4. pprof and speedscope of 1,000,000 samples (bench/bench_export). Target: < 1 s each.
# Ratios are of wall and of CPU (user+sys) time: on a shared machine CPU time is the steadier.
# Usage: bench/bench-flamegraph.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=${1:-build}
lockprof=$build/lockprof
gen=$build/bench/gen_perf_script
samples=${SAMPLES:-1000000}
stacks=${STACKS:-100000}
record_seconds=${RECORD_SECONDS:-8}
for f in "$lockprof" "$gen" "$build/bench/bench_export"; do
  [[ -x $f ]] || { echo "bench-flamegraph: $f missing; build with: ninja -C $build lockprof gen_perf_script" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs "$@", prints wall and CPU (user+sys) seconds of it into the named variables.
measure() {
  local wall_var=$1 cpu_var=$2; shift 2
  local t0 t1 c0 c1
  c0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)  # children's ticks so far
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  c1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  printf -v "$wall_var" '%.3f' "$(echo "$t1 - $t0" | bc -l)"
  printf -v "$cpu_var" '%.3f' "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)"
}

echo "== synthetic: $samples samples, $stacks unique stacks =="
"$gen" "$samples" "$stacks" > "$work/synthetic.txt"
echo "perf script text: $(du -m "$work/synthetic.txt" | cut -f1) MiB"
measure fold_wall fold_cpu "$lockprof" fold "$work/synthetic.txt" -o "$work/synthetic.folded"
measure svg_wall svg_cpu "$lockprof" flamegraph "$work/synthetic.folded" -o "$work/synthetic.svg"
echo "unique stacks folded: $(wc -l < "$work/synthetic.folded"), SVG: $(du -k "$work/synthetic.svg" | cut -f1) KiB"
echo "lockprof fold:       wall ${fold_wall} s, cpu ${fold_cpu} s"
echo "lockprof flamegraph: wall ${svg_wall} s, cpu ${svg_cpu} s"
echo "fold + render:       wall $(echo "$fold_wall + $svg_wall" | bc -l) s, cpu $(echo "$fold_cpu + $svg_cpu" | bc -l) s (target < 2 s)"
echo "== pprof and speedscope of $samples samples over $stacks stacks (target < 1 s each) =="
"$build/bench/bench_export" "$samples" "$stacks"

if ! command -v perf >/dev/null || ! command -v cc >/dev/null; then
  echo "== side by side skipped: needs perf (linux-perf) and cc =="
  exit 0
fi
echo "== side by side on one perf recording (${record_seconds} s at 20 kHz) =="
cat > "$work/paths.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
typedef void (*fn)(int, unsigned);
static fn table[10];
/* Each level calls table[digit] for the next digit of the path: 10^5 distinct stacks. */
#define F(n) __attribute__((noinline)) static void f##n(int level, unsigned path) { \
    if (level == 5) { for (int i = 0; i < 2000; i++) sink += i; return; } \
    unsigned d = path % 10; table[d](level + 1, path / 10); sink++; }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9)
int main(int argc, char** argv) {
    fn all[10] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9};
    for (int i = 0; i < 10; i++) table[i] = all[i];
    double seconds = argc > 1 ? atof(argv[1]) : 8;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned p = 0;; p = (p + 7919) % 100000) {
        table[p % 10](1, p / 10);
        if ((p & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds) break;
        }
    }
    printf("%lu\n", sink);
    return 0;
}
C
cc -O1 -fno-omit-frame-pointer -o "$work/paths" "$work/paths.c"
perf record -q -F 20000 -e cpu-clock -g -o "$work/perf.data" "$work/paths" "$record_seconds" >/dev/null 2>"$work/record.err" \
  || { echo "perf record failed: $(head -c 300 "$work/record.err")"; exit 0; }
measure script_wall script_cpu sh -c "perf script -i '$work/perf.data' > '$work/perf.txt' 2>/dev/null"
nsamples=$(grep -c 'cpu-clock' "$work/perf.txt" || true)
echo "samples recorded: $nsamples"
measure perf_wall perf_cpu sh -c "perf script report stackcollapse -i '$work/perf.data' > '$work/perf.folded' 2>/dev/null"
measure lp_wall lp_cpu sh -c "'$lockprof' fold '$work/perf.txt' -o '$work/lp.folded' && '$lockprof' flamegraph '$work/lp.folded' -o '$work/lp.svg'"
echo "unique stacks: perf stackcollapse $(wc -l < "$work/perf.folded"), lockprof fold $(wc -l < "$work/lp.folded")"
# perf's stackcollapse does not mark kernel frames; compare without lockprof's _[k] (untimed).
"$lockprof" fold --no-kernel-suffix "$work/perf.txt" -o "$work/lp-plain.folded"
if cmp -s <(sort "$work/perf.folded") <(sort "$work/lp-plain.folded"); then
  echo "folded output (without _[k]): identical to perf's stackcollapse"
else
  echo "folded output (without _[k]): differs from perf's stackcollapse in $(comm -3 <(sort "$work/perf.folded") <(sort "$work/lp-plain.folded") | wc -l) lines"
fi
echo "perf script report stackcollapse (fold only):   wall ${perf_wall} s, cpu ${perf_cpu} s"
echo "perf script (text, input to lockprof fold):     wall ${script_wall} s, cpu ${script_cpu} s"
echo "lockprof fold + flamegraph (from the text):     wall ${lp_wall} s, cpu ${lp_cpu} s"
echo "ratio stackcollapse / lockprof (wall):          $(echo "$perf_wall / $lp_wall" | bc -l | xargs printf '%.1f')x"
echo "ratio stackcollapse / (perf script + lockprof): $(echo "$perf_wall / ($script_wall + $lp_wall)" | bc -l | xargs printf '%.1f')x"

echo "== end to end from perf.data (the same recording) =="
measure data_wall data_cpu "$lockprof" fold "$work/perf.data" -o "$work/lp-data.folded"
measure pipe_wall pipe_cpu sh -c "perf script -i '$work/perf.data' 2>/dev/null | '$lockprof' fold -o '$work/lp-pipe.folded'"
if cmp -s "$work/lp-data.folded" "$work/lp-pipe.folded"; then
  echo "lockprof fold perf.data: identical to perf script | lockprof fold ($(wc -l < "$work/lp-data.folded") stacks)"
else
  echo "lockprof fold perf.data: DIFFERS from perf script | lockprof fold in $(comm -3 "$work/lp-data.folded" "$work/lp-pipe.folded" | wc -l) lines"
fi
"$lockprof" fold --no-kernel-suffix "$work/perf.data" -o "$work/lp-data-plain.folded"
if cmp -s <(sort "$work/perf.folded") <(sort "$work/lp-data-plain.folded"); then
  echo "lockprof fold perf.data (without _[k]): identical to perf's stackcollapse"
else
  echo "lockprof fold perf.data (without _[k]): differs from perf's stackcollapse in $(comm -3 <(sort "$work/perf.folded") <(sort "$work/lp-data-plain.folded") | wc -l) lines"
fi
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.1f'; }
echo "lockprof fold perf.data:                        wall ${data_wall} s, cpu ${data_cpu} s"
echo "perf script | lockprof fold:                    wall ${pipe_wall} s, cpu ${pipe_cpu} s"
echo "perf script report stackcollapse:               wall ${perf_wall} s, cpu ${perf_cpu} s"
echo "ratio stackcollapse / fold perf.data:           wall $(ratio "$perf_wall" "$data_wall")x, cpu $(ratio "$perf_cpu" "$data_cpu")x (target >= 5x)"
echo "ratio (perf script | fold) / fold perf.data:    wall $(ratio "$pipe_wall" "$data_wall")x, cpu $(ratio "$pipe_cpu" "$data_cpu")x"
