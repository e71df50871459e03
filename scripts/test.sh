#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what is missing, builds (and lockprof
# alone without -g, build-release/), runs every test through CTest, then the unit, CLI and
# integration tests under ASan+UBSan (clang; the same build makes the fuzz targets) and the unit
# tests under TSan (clang too), then the fuzz targets for a bounded time (libFuzzer;
# scripts/test-fuzz.sh). Beside those x86 stages, from the end of the builds on, the aarch64
# stage (cross build, qemu-user; scripts/test-aarch64.sh) and then the emulated arm64 system
# stage (a real kernel PMU driver under qemu-system-aarch64; scripts/test-arm-system.sh) run in
# the background (scripts/lib/aarch64-stages.sh), their output kept in build/aarch64-stages.log
# and printed at the end. The tests' own code compiles -O0 in every build (tests/CMakeLists.txt
# says which parts keep the build's flags). The ASan stage runs the main build's CLI and
# integration test programs against its own lockprof (LOCKPROF_TEST_BIN).
#   LOCKPROF_SKIP_SANITIZERS=1 scripts/test.sh   skips the sanitizer builds (local iteration)
#   LOCKPROF_SKIP_FUZZ=1 scripts/test.sh         skips the fuzz stage
#   LOCKPROF_SKIP_AARCH64=1 scripts/test.sh      skips both aarch64 stages
#   LOCKPROF_SKIP_ARM_SYSTEM=1 scripts/test.sh   skips only the emulated arm64 system stage
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs="$(nproc)"
start=$SECONDS
# Each stage's time, printed at the end of the run (passed or failed): "name|wall|cpu" entries.
# Beside each wall time, the CPU time its processes used (user + system, of children this shell
# waited for): CPU/wall near 2 on the 2-core VM means the stage kept both cores busy.
stage_times=()
stage_name=""
stage_start=$SECONDS
stage_cpu=0
times_file=$(mktemp)
beside_cpu=0  # the aarch64 stages', which ran outside this shell's children (below)
# shellcheck source=lib/children-cpu.sh
source "$root/scripts/lib/children-cpu.sh"
stage() {
  count_children_cpu "$times_file"
  if [[ -n $stage_name ]]; then
    stage_times+=("$stage_name|$((SECONDS - stage_start))|$((children_cpu - stage_cpu))")
  fi
  stage_name="$1"
  stage_start=$SECONDS
  stage_cpu=$children_cpu
}
print_stage_times() {
  stage ""
  echo "== stage times (s) =="
  printf '  %-28s %5s %6s\n' "stage" "wall" "cpu"
  local entry name wall cpu
  for entry in "${stage_times[@]}"; do
    IFS='|' read -r name wall cpu <<<"$entry"
    printf '  %-28s %5s %6s\n' "$name" "$wall" "$cpu"
  done
  printf '  %-28s %5s %6s\n' "total" "$((SECONDS - start))" "$((children_cpu + beside_cpu))"
  rm -f "$times_file"
}
# The aarch64 stages' own session (setsid), stopped when this script ends first.
arm_pid=""
stop_aarch64_stages() {
  if [[ -n $arm_pid ]] && kill -0 "$arm_pid" 2>/dev/null; then
    kill -TERM -- "-$arm_pid" 2>/dev/null || true
    echo "== aarch64 stages stopped: the x86 stages failed first (their output so far: build/aarch64-stages.log) =="
  fi
}
on_exit() {
  local rc=$?
  stop_aarch64_stages
  print_stage_times
  return $rc
}
trap on_exit EXIT
stage setup
# chromium (SVG and report rendering), postgresql and clang (the fuzz stage) come with --extras; --cross brings the
# aarch64 toolchain, qemu-user and the arm64 libraries; --system qemu-system-aarch64.
"$root/scripts/setup.sh" --extras --cross --system

# Variable-location tracking is the costliest part of -g at -O1/-O2 and nothing here reads
# local variables' locations (the symbol tests read lines and inline chains): without it each
# file compiles about a sixth faster, and CI builds the tree four times on two cores. CMake
# takes CXXFLAGS for every build below, the aarch64 one included.
export CXXFLAGS="${CXXFLAGS:-} -fno-var-tracking-assignments"
# Every build below is a clean one in CI: compile each library and test program as one unity
# batch (CMakeLists.txt, LOCKPROF_UNITY_BUILD, says what it saves).
export LOCKPROF_UNITY_BUILD=1

stage build
echo "== build (RelWithDebInfo) =="
"$root/scripts/build.sh" "$root/build" | { grep -v '^\[' || true; }
# lockprof as many users and packagers build it: Release, no -g, so no inline information for
# the loop phases (docs/sampling.md, "Loop phases"). The binary alone, in unity batches; the CLI
# test CliSampling.ReleaseBuildStacksEndInTheAcquireLoop runs it through LOCKPROF_RELEASE_BIN
# (and skips, saying so, where that is not set).
stage "release build"
echo "== build lockprof (Release, without -g) =="
cmake -S "$root" -B "$root/build-release" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLOCKPROF_BUILD_TESTS=OFF >/dev/null
ninja -C "$root/build-release" lockprof | { grep -v '^\[' || true; }
export LOCKPROF_RELEASE_BIN="$root/build-release/lockprof"

# The aarch64 stages beside the x86 ones below. Alone they left a core idle most of their time
# (qemu-user runs the unit tests on one core; the system guests on one or two, 226 s of CPU in
# 210 s), as did the x86 test runs (233 s of CPU in 202 s): side by side, what one leaves idle
# the other's compiles take. The arm-system stage re-annotates guest samples with build/lockprof,
# built above.
# They are started from a subshell that exits at once, so they are not this shell's children:
# bash adds a child's CPU time to `times` whenever it reaps it, which would charge theirs to
# whichever x86 stage was running; their own lines say what they used.
arm_times="$root/build/aarch64-stages.times"
arm_log="$root/build/aarch64-stages.log"
arm_status="$root/build/aarch64-stages.status"
if [[ "${LOCKPROF_SKIP_AARCH64:-0}" != 1 ]]; then
  : >"$arm_times"
  rm -f "$arm_status"
  echo "== aarch64 stages started beside the x86 stages (output: build/aarch64-stages.log) =="
  arm_pid=$(
    setsid bash -c '"$0" "$1"; echo $? >"$2"' "$root/scripts/lib/aarch64-stages.sh" \
      "$arm_times" "$arm_status" >"$arm_log" 2>&1 </dev/null &
    echo $!
  )
fi

stage tests
echo "== tests =="
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

if [[ "${LOCKPROF_SKIP_SANITIZERS:-0}" != 1 ]]; then
  for sanitizer in address,undefined thread; do
    dir="$root/build-san-${sanitizer%%,*}"
    # Under ASan+UBSan the binary itself too: the CLI and integration tests (the fault battery,
    # PostgreSQL, perf.data, pprof, Chromium) run it, so every command's own code (parsing,
    # write-out, interrupts, record) is checked, not only the units. Those tests are the main
    # build's programs, pointed at this build's lockprof (LOCKPROF_TEST_BIN,
    # tests/support/lockprof_under_test.hpp): what they check is lockprof's code, which they
    # run as a separate process, so compiling their own code again under ASan checked only the
    # drivers (about 100 s of compile jobs here). The unit tests link lockprof's libraries and
    # are built here; their own code gets ASan only (tests/CMakeLists.txt says why). TSan
    # checks the threaded units (trials, samplers); a TSan lockprof would mostly re-run them.
    targets=(lockprof_unit_tests)
    # Both with clang. ASan+UBSan also makes the fuzz stage's targets (LOCKPROF_FUZZ): one build
    # of 444 s where there were two (GCC's ASan build, 543 s, and the fuzz stage's own, about
    # 260 s; the 2-core VM, clean builds). clang compiled a library batch with ASan+UBSan in 57 s
    # against GCC's 132 s; TSan's unit tests built in 152 s wall (298 s of CPU) and ran in 51 s
    # (96 s of CPU), where GCC's stage took 271-299 s and 474-477 s of CPU in CI. Line tables
    # and inline chains are what the symbol tests read: -gline-tables-only writes them, and
    # -fdebug-info-for-profiling adds the functions' linkage names, which the loop phases need
    # (57 s against 71 s with -g). ASan's build is -O1: its CLI and integration tests spend
    # their time in lockprof's own code (symbols, annotation, write-out), and with the libraries
    # at -O0 they took 634 s of CPU against 355 s, more than the build saved. TSan's is -O0: it
    # runs the unit tests only, whose threads run timed trials. At -O0 its build took 129 s of
    # CPU and its tests 127 s (the idle 2-core VM, one after the other), where the stage at -O1
    # took 290 s in a clean-clone run, 110 s of them the tests (rerun on the idle VM). Without
    # inlining one test skips there, the resolver's inline chains against libdw's walk, which
    # the first build's tests run. CXXFLAGS is left out: it holds GCC's
    # -fno-var-tracking-assignments.
    optimise=-O1
    [[ $sanitizer == thread ]] && optimise=-O0
    configure=(-DCMAKE_CXX_COMPILER=clang++
      -DCMAKE_CXX_FLAGS="$optimise -gline-tables-only -fdebug-info-for-profiling")
    compiler=(env -u CXXFLAGS)
    if [[ $sanitizer == address,undefined ]]; then
      targets+=(lockprof)
      configure+=(-DLOCKPROF_FUZZ=ON)
      [[ ${LOCKPROF_SKIP_FUZZ:-0} == 1 ]] || targets+=(fuzz_targets)
    fi
    stage "sanitizer ${sanitizer%%,*}"
    echo "== tests under -fsanitize=$sanitizer =="
    # A folder configured by an earlier version of this script with the other compiler:
    # CMake cannot change a configured folder's compiler, so it is configured anew.
    if [[ -f $dir/CMakeCache.txt ]]; then
      configured=gcc wanted=gcc
      grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' "$dir/CMakeCache.txt" && configured=clang
      [[ ${#compiler[@]} -eq 0 ]] || wanted=clang
      [[ $configured == "$wanted" ]] || rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    fi
    "${compiler[@]}" cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=None "${configure[@]}" \
      -DLOCKPROF_SANITIZE="$sanitizer" >/dev/null
    ninja -C "$dir" "${targets[@]}" | { grep -v '^\[' || true; }
    runner=()
    # TSan needs the address space layout it expects; ASLR-heavy kernels break it.
    if [[ $sanitizer == thread ]] && command -v setarch >/dev/null; then runner=(setarch "$(uname -m)" -R); fi
    "${runner[@]}" ctest --test-dir "$dir" -L unit --output-on-failure -j "$jobs"
    if [[ $sanitizer == address,undefined ]]; then
      echo "== CLI and integration tests against the -fsanitize=$sanitizer lockprof =="
      LOCKPROF_TEST_BIN="$dir/lockprof" ctest --test-dir "$root/build" -L "cli|integration" \
        --output-on-failure -j "$jobs"
    fi
  done
fi

if [[ "${LOCKPROF_SKIP_FUZZ:-0}" != 1 ]]; then
  # Every parser of outside input under libFuzzer, ASan and UBSan, each target for
  # LOCKPROF_FUZZ_SECONDS (10) s (scripts/test-fuzz.sh). The targets come from the ASan build
  # above; with LOCKPROF_SKIP_SANITIZERS=1 test-fuzz.sh makes its own build in build-fuzz/.
  stage fuzz
  if [[ "${LOCKPROF_SKIP_SANITIZERS:-0}" != 1 ]]; then export LOCKPROF_FUZZ_BUILD="$root/build-san-address"; fi
  "$root/scripts/test-fuzz.sh"
fi

if [[ -n $arm_pid ]]; then
  stage "aarch64 stages: waiting"
  while kill -0 "$arm_pid" 2>/dev/null; do sleep 2; done
  arm_pid=""
  arm_rc=$(cat "$arm_status" 2>/dev/null || echo "unknown (no status written)")
  echo "== aarch64 stages (ran beside the x86 stages) =="
  cat "$arm_log"
  while IFS='|' read -r name wall cpu; do
    stage_times+=("$name (beside)|$wall|$cpu")
    beside_cpu=$((beside_cpu + cpu))
  done <"$arm_times"
  [[ $arm_rc == 0 ]] || { echo "== aarch64 stages FAILED (exit $arm_rc): output above ==" >&2; exit 1; }
fi
echo "== all tests passed in $((SECONDS - start)) s =="
