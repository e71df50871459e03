#!/usr/bin/env bash
# The libFuzzer stage: builds the fuzz targets (tests/fuzz, -DLOCKPROF_FUZZ=ON, clang with
# ASan+UBSan) in build-fuzz/ and runs each for a bounded time. Any crash, hang (-timeout), leak,
# out-of-memory (-rss_limit_mb) or sanitizer report fails the stage; one summary line per target.
#   scripts/test-fuzz.sh                      every target, LOCKPROF_FUZZ_SECONDS (10) s each
#   scripts/test-fuzz.sh folded perf_script   only those targets
#   LOCKPROF_FUZZ_SECONDS=300 scripts/test-fuzz.sh   a longer campaign (docs/reliability.md)
#   LOCKPROF_FUZZ_JOBS=1 scripts/test-fuzz.sh        one target at a time (default: one per CPU)
# A finding is left as build-fuzz/findings/<target>/crash-* (or timeout-*, leak-*, oom-*); replay
# it with `build-fuzz/tests/fuzz/fuzz_<target> FILE`. New inputs the runs find go to
# build-fuzz/corpus/<target>/, never into the seed corpora under tests/fuzz/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LOCKPROF_FUZZ_BUILD:-$root/build-fuzz}"
seconds="${LOCKPROF_FUZZ_SECONDS:-10}"
start=$SECONDS

for tool in clang++ ninja cmake; do
  command -v "$tool" >/dev/null || {
    echo "test-fuzz: $tool not found; run scripts/setup.sh (it installs clang and libclang-rt-dev)" >&2
    exit 2
  }
done

# A build folder already configured for fuzzing (LOCKPROF_FUZZ_BUILD; one that builds the tests
# under ASan+UBSan as well, say) is used as it is. Otherwise: -O1 and line tables only, quick
# to build, and sanitizer reports still name file:line. CXXFLAGS is left out: test.sh's is
# GCC's (-fno-var-tracking-assignments), which clang refuses.
if ! grep -qs '^LOCKPROF_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  env -u CXXFLAGS cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
    "-DCMAKE_CXX_FLAGS=-O1 -gline-tables-only" -DLOCKPROF_FUZZ=ON -DLOCKPROF_BUILD_TESTS=OFF \
    ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} \
    >/dev/null
fi
echo "== fuzz targets: build =="
ninja -C "$build" fuzz_targets | { grep -v '^\[' || true; }

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for source in "$root"/tests/fuzz/fuzz_*.cpp; do
    name="$(basename "$source" .cpp)"
    targets+=("${name#fuzz_}")
  done
fi

# Reports must stop the run: UBSan aborts like ASan, leaks count (LeakSanitizer).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Targets run side by side, one per CPU (LOCKPROF_FUZZ_JOBS to change it): each is one
# single-threaded process, and the stage has the machine to itself in test.sh.
jobs="${LOCKPROF_FUZZ_JOBS:-$(nproc)}"
for target in "${targets[@]}"; do
  [[ -x $build/tests/fuzz/fuzz_$target ]] || { echo "test-fuzz: no target '$target' ($build/tests/fuzz/fuzz_$target)" >&2; exit 2; }
done
mkdir -p "$build/logs"
for target in "${targets[@]}"; do rm -f "$build/logs/$target.result" "$build/logs/$target.failed"; done

# One target for $seconds s; its summary line goes to logs/<target>.result, and a failure
# leaves logs/<target>.failed.
run_target() {
  local target="$1"
  local binary="$build/tests/fuzz/fuzz_$target"
  local seeds="$root/tests/fuzz/$target"
  local corpus="$build/corpus/$target"
  local findings="$build/findings/$target"
  local log="$build/logs/$target.log"
  mkdir -p "$corpus" "$findings"
  local dict=()
  [[ -f $root/tests/fuzz/$target.dict ]] && dict=("-dict=$root/tests/fuzz/$target.dict")
  # One process per target (no -jobs). -timeout: an input taking longer is a hang;
  # -rss_limit_mb and -malloc_limit_mb: one allocating more is a finding.
  local status=0 began=$SECONDS result
  "$binary" "$corpus" "$seeds" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  local execs units
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  # libFuzzer's own figure: the inputs its corpus holds at the end (seeds and new ones).
  units="$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
  if [[ $status -eq 0 ]] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
    result="ok"
  else
    result="FAILED (exit $status): $(grep -m1 -E 'ERROR:|runtime error:|fuzz: ' "$log" || tail -1 "$log")"
    touch "$build/logs/$target.failed"
  fi
  printf 'fuzz %-12s %4s s  %10s execs  corpus %5s  %s\n' "$target" "$((SECONDS - began))" "${execs:-?}" \
    "${units:-?}" "$result" >"$build/logs/$target.result"
}

echo "== fuzz targets: ${#targets[@]} x ${seconds} s, $jobs at a time =="
running=0
for target in "${targets[@]}"; do
  run_target "$target" &
  running=$((running + 1))
  if [[ $running -ge $jobs ]]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
failed=()
for target in "${targets[@]}"; do
  cat "$build/logs/$target.result" 2>/dev/null || echo "fuzz $target: no result (the run died)"
  [[ -f $build/logs/$target.failed || ! -f $build/logs/$target.result ]] && failed+=("$target")
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test-fuzz: findings in ${failed[*]}: inputs under $build/findings/, logs under $build/logs/" >&2
  exit 1
fi
echo "== fuzz targets passed in $((SECONDS - start)) s =="
