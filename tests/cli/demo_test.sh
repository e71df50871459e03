#!/usr/bin/env bash
# Tests the plan of scripts/demo.sh: the lockprof invocation it chooses for a CPU count (the
# test seam LOCKPROF_DEMO_CPUS stands in for this machine's), its thread counts, its
# --trials auto budget, the line on the profile's thread counts it leaves out, and that the
# caller's options replace the demo's own. Then runs the 2-CPU invocation against the built
# binary, with short trials, and reads back from the result file what lockprof ran. Structure
# only: nothing here depends on how fast anything runs. Run by ctest (tests/CMakeLists.txt):
#   demo_test.sh LOCKPROF
# Prints one line per assertion; exits 1 at the end if any failed.
set -uo pipefail
lockprof=${1:?usage: demo_test.sh LOCKPROF}
# The binary under test, as the CLI tests choose it (tests/support/lockprof_under_test.hpp).
lockprof=${LOCKPROF_TEST_BIN:-$lockprof}
root="$(cd "$(dirname "$0")/../.." && pwd)"
demo="$root/scripts/demo.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/demo-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else
        echo "FAIL: $what"
        failures=$((failures + 1))
    fi
}
# plan NAME CPUS [OPTIONS...]: the demo's --print-plan for CPUS in $work/NAME.out, its
# invocation (first line) in $invocation, exit status in $status.
plan() {
    local name=$1 cpus=$2
    shift 2
    LOCKPROF_DEMO_CPUS=$cpus bash "$demo" --print-plan "$@" >"$work/$name.out" 2>&1
    status=$?
    invocation=$(head -n 1 "$work/$name.out")
}
has() { [[ " $invocation " == *" $1 "* ]]; }   # has 'WORDS': the invocation holds them
hasnt() { ! has "$1"; }
lines() { grep -c . "$work/$1.out"; }

# --- 2 CPUs: the development VM's shape -----------------------------------------------------
plan two 2
check "2 CPUs: --print-plan exits 0" test "$status" -eq 0
check "2 CPUs: runs the thread's profile" has "--profile $root/profiles/tas-vs-cas.ini"
check "2 CPUs: threads 1 and 2" has "--threads 1,2"
check "2 CPUs: --trials auto" has "--trials auto"
check "2 CPUs: a budget of 60 s (10 s for each of 6 cells)" has "--max-time 60s"
check "2 CPUs: 200 ms trials" has "--duration 200ms"
check "2 CPUs: the result file in build/" has "--output $root/build/demo.json"
check "2 CPUs: one line on what was left out" test "$(lines two)" -eq 2
check "2 CPUs: it names the thread's counts" grep -q "^128, 256, 512 and 1024 threads" "$work/two.out"
check "2 CPUs: it says why" grep -q "this machine has 2 CPUs" "$work/two.out"
check "2 CPUs: it says how to run them" \
    grep -q "to run them anyway: build/lockprof --profile profiles/tas-vs-cas.ini$" "$work/two.out"

# --- other CPU counts ---------------------------------------------------------------------------
plan one 1
check "1 CPU: threads 1" has "--threads 1"
check "1 CPU: a budget of 30 s (3 cells)" has "--max-time 30s"
check "1 CPU: 'this machine has 1 CPU,'" grep -q "this machine has 1 CPU," "$work/one.out"
plan six 6
check "6 CPUs: powers of two and the count itself" has "--threads 1,2,4,6"
check "6 CPUs: a budget of 120 s (12 cells)" has "--max-time 120s"
plan many 256
check "256 CPUs: the profile's 128 and 256 among them" has "--threads 1,2,4,8,16,32,64,128,256"
check "256 CPUs: the budget at its 3-minute cap" has "--max-time 180s"
check "256 CPUs: 512 and 1024 left out" grep -q "^512 and 1024 threads" "$work/many.out"
plan all 1024
check "1024 CPUs: every count of the thread's" has "--threads 1,2,4,8,16,32,64,128,256,512,1024"
check "1024 CPUs: nothing left out, no line" test "$(lines all)" -eq 1

# --- the caller's options replace the demo's -------------------------------------------------
plan own 2 --threads=2,4 --trials 5 -o "$work/own.json"
check "own options: exit 0" test "$status" -eq 0
check "own options: the caller's --threads, not the demo's" has "--threads=2,4"
check "own options: no --threads 1,2" hasnt "--threads 1,2"
check "own options: the caller's --trials, without --trials auto" hasnt "--trials auto"
check "own options: no --max-time beside a fixed --trials" hasnt "--max-time 60s"
check "own options: the caller's output, not build/demo.json" hasnt "--output $root/build/demo.json"
check "own options: no left-out line when the caller chose the threads" test "$(lines own)" -eq 1
plan profile 2 --profile "$root/profiles/quick.ini"
check "own --profile: the caller's, not the thread's" hasnt "--profile $root/profiles/tas-vs-cas.ini"
check "own --profile: given once" has "--profile $root/profiles/quick.ini"
plan budget 2 --max-time 5s
check "own --max-time: the demo's --trials auto with it" has "--trials auto"
check "own --max-time: the caller's budget" has "--max-time 5s"
check "own --max-time: not the demo's" hasnt "--max-time 60s"

# --- usage errors: exit 2, one line -----------------------------------------------------------
for bad in 0 x 2.5 -1; do
    plan "bad$bad" "$bad"
    check "LOCKPROF_DEMO_CPUS=$bad exits 2" test "$status" -eq 2
    check "LOCKPROF_DEMO_CPUS=$bad: one line naming it" \
        bash -c "[[ \$(grep -c . '$work/bad$bad.out') -eq 1 ]] && grep -q LOCKPROF_DEMO_CPUS '$work/bad$bad.out'"
done

# --- the run's last word (scripts/lib/demo-summary.py) on two result files ---------------------
summary="$root/scripts/lib/demo-summary.py"
fixtures="$root/tests/cli/fixtures/demo"
said=$(python3 "$summary" "$fixtures/settled.json" 60)
check "settled: one line" test "$(grep -c . <<<"$said")" -eq 1
check "settled: the decided comparisons, by lock, with their ratios" \
    test "$said" = "2 of 4 comparisons settled: cas slower than tas (0.64x at 1 thread, 0.65x at 2 threads)"
said=$(python3 "$summary" "$fixtures/unsettled.json" 31)
check "unsettled: one line" test "$(grep -c . <<<"$said")" -eq 1
check "unsettled: says nothing settled in the budget" grep -q "^no verdict settled in the 60 s budget: " <<<"$said"
check "unsettled: the measured noise against the band" \
    grep -q "the cells' intervals were ±40-58%, wider than the ±2% band" <<<"$said"
# 830 trials to narrow, at 31 s / 56 trials: 459.5 s.
check "unsettled: the budget that would likely settle it" \
    grep -q "about 300 trials per cell, a --max-time of about 8 min, .*(scripts/demo.sh --max-time 460s)" <<<"$said"
python3 "$summary" "$work/no-such.json" 60 >"$work/summary-missing.out" 2>&1
check "a missing result file: exit 1" test "$?" -eq 1
check "a missing result file: one line naming it" \
    bash -c "[[ \$(grep -c . '$work/summary-missing.out') -eq 1 ]] && grep -q no-such.json '$work/summary-missing.out'"

# --- the 2-CPU invocation, run -------------------------------------------------------------------
# The demo's own words with short trials and a wide band, so the cells settle in seconds; what
# is checked is what lockprof was asked, read back from its result file. Trials of a fixed
# count of acquires, since a 10 ms trial on a loaded machine can measure none at all, and a
# cell with such a trial never settles.
plan run 2 --acquires 20k --equivalence 49% --quiet --output "$work/run.json"
words=()
eval "words=($invocation)" # the demo quotes what needs quoting (words() in demo.sh)
(cd "$work" && "$lockprof" "${words[@]:1}") >"$work/run.log" 2>&1
ran=$?
check "the 2-CPU invocation runs (exit 0)" test "$ran" -eq 0
[[ $ran -eq 0 ]] || cat "$work/run.log"
read_back() { # read_back PYTHON-EXPRESSION: true when it holds of the result file ('r')
    python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
        "$work/run.json"
}
check "run: threads 1 and 2" read_back 'r["config"]["threads"] == [1, 2]'
check "run: the profile's locks" read_back 'r["config"]["locks"] == ["tas", "ttas", "cas"]'
check "run: the caller's --acquires instead of the demo's --duration" \
    read_back 'r["config"]["acquires_per_thread"] == 20000 and r["config"]["duration_ns"] is None'
check "run: --trials auto with a 60 s budget" \
    read_back 'r["config"]["trials_auto"]["max_time_ns"] == 60 * 10**9'
check "run: the profile's work kept (critical 50 ns, parallel 200 ns, 1 line)" \
    read_back 'r["config"]["critical_ns"] == 50 and r["config"]["parallel_ns"] == 200 and r["config"]["shared_lines"] == 1'
check "run: 6 cells, each stopped by the rule or the budget" \
    read_back 'len(r["cells"]) == 6 and all(c["stop"]["reason"] in ("settled", "budget") for c in r["cells"])'

if [[ $failures -gt 0 ]]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
