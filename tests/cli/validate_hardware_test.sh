#!/usr/bin/env bash
# Tests scripts/validate-hardware.sh (docs/validate.md). Run by ctest (tests/CMakeLists.txt):
#   validate_hardware_test.sh quick LOCKPROF   a --quick run against the built binary on this
#                                              machine, usage errors, a failing step, Ctrl-C
#   validate_hardware_test.sh check LOCKPROF   --check on the fixture folders in
#                                              tests/cli/fixtures/validate (verdict logic)
#   validate_hardware_test.sh several LOCKPROF --check on several folders and bundles at once:
#                                              the table, a row per host; its usage errors
# Prints one line per assertion; exits 1 at the end if any failed.
set -uo pipefail
mode=${1:?usage: validate_hardware_test.sh quick|check|several LOCKPROF}
lockprof=${2:?usage: validate_hardware_test.sh quick|check|several LOCKPROF}
# The binary under test, as the CLI tests choose it (tests/support/lockprof_under_test.hpp).
lockprof=${LOCKPROF_TEST_BIN:-$lockprof}
root="$(cd "$(dirname "$0")/../.." && pwd)"
script="$root/scripts/validate-hardware.sh"
fixtures="$root/tests/cli/fixtures/validate"
work=$(mktemp -d "${TMPDIR:-/tmp}/validate-hardware-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

# Runs the script; its stdout+stderr in $work/$1.out, exit status in $status.
status=0
run() {
    local name=$1
    shift
    bash "$script" "$@" >"$work/$name.out" 2>&1
    status=$?
}
# An error must be one line, and say which option or step.
one_line_error() { # one_line_error NAME WORD
    [[ $(grep -c . "$work/$1.out") -eq 1 ]] && grep -q -- "$2" "$work/$1.out"
}

quick_tests() {
    # --- usage errors: exit 2, one line -------------------------------------------------------
    run bad-option --bogus
    check "unknown option exits 2 with one line" test "$status" -eq 2
    check "unknown option names it" one_line_error bad-option "unknown argument '--bogus'"
    run bad-threads --threads 0,2 --lockprof "$lockprof"
    check "--threads 0,2 exits 2 with one line" test "$status" -eq 2
    check "--threads error names the list" one_line_error bad-threads "--threads '0,2'"
    run bad-lockprof --lockprof "$work/no-such-lockprof"
    check "a missing --lockprof exits 2 with one line" test "$status" -eq 2
    check "--lockprof error names the path" one_line_error bad-lockprof "no-such-lockprof"
    run bad-check --check "$work/no-such-folder"
    check "--check of a missing folder exits 2 with one line" test "$status" -eq 2
    mkdir -p "$work/not-empty" && touch "$work/not-empty/x"
    run not-empty --out "$work/not-empty" --lockprof "$lockprof"
    check "a non-empty --out exits 2 with one line" test "$status" -eq 2
    check "the --out error says why" one_line_error not-empty "not empty"
    run help --help
    check "--help exits 0" test "$status" -eq 0
    check "--help explains the checks and the gate" grep -q "sanity gate" "$work/help.out"

    # --- the real quick run -------------------------------------------------------------------
    local out="$work/run" start=$SECONDS
    run quick --quick --lockprof "$lockprof" --out "$out"
    echo "quick run took $((SECONDS - start)) s; its output:"
    sed 's/^/  | /' "$work/quick.out"
    check "--quick exits 0" test "$status" -eq 0
    for f in doctor.txt events.txt list-locks.txt machine.txt sweep.json sweep.csv sweep.log \
        sample.json samples.json report.html verdicts.txt summary.md; do
        check "the folder holds $f" test -s "$out/$f"
    done
    check "the bundle exists" test -s "$out.tar.gz"
    check "the run says where the bundle is" grep -q "bundle to attach: $out.tar.gz" "$work/quick.out"
    check "the bundle holds summary.md" bash -c "tar -tzf '$out.tar.gz' | grep -q '^run/summary.md$'"
    check "the bundle holds sweep.csv" bash -c "tar -tzf '$out.tar.gz' | grep -q '^run/sweep.csv$'"
    check "no temporary file is left" bash -c "! ls -A '$out' | grep -q '\\.tmp'"
    check "summary.md has the verdicts" grep -q '^### Mechanism checks' "$out/summary.md"
    check "summary.md has the throughput table" grep -q '^### Throughput' "$out/summary.md"
    check "summary.md has lockprof's provenance" grep -q '^| lockprof build |' "$out/summary.md"

    # Each check must be "not measurable here" with the reason that is true here.
    local arch reason
    arch=$(sed -n 's/^arch=//p' "$out/machine.txt")
    if [[ $arch == x86_64 ]]; then
        reason="x86_64 has no LL/SC"
    elif grep -q '^perf_event (hardware)  *works' "$out/doctor.txt"; then
        reason="" # an aarch64 machine with counters: any verdict may be true, checked below
    else
        reason="not counted" # aarch64 without a PMU (a VM, or qemu-user): lockprof's reason
    fi
    for letter in a b c; do
        local line
        line=$(grep "^check $letter: " "$out/verdicts.txt")
        check "check $letter printed once on the terminal" \
            test "$(grep -c "^  check $letter: " "$work/quick.out")" -eq 1
        if [[ -n $reason ]]; then
            check "check $letter: not measurable here ($reason ...)" \
                bash -c "[[ \$1 == 'check $letter: not measurable here ('*'$reason'*')' ]]" _ "$line"
        else
            check "check $letter has a verdict" \
                bash -c "[[ \$1 =~ ^check\ $letter:\ (confirmed|refuted|not\ measurable\ here\ \() ]]" _ "$line"
        fi
    done
    if ! grep -q '^virtualisation  *none detected' "$out/doctor.txt"; then
        check "summary.md says the run was virtualised, as doctor reports" \
            grep -q 'Measured under virtualisation or emulation' "$out/summary.md"
    fi
    # --check recomputes exactly what the run printed.
    bash "$script" --check "$out" | grep -v '^validate-hardware:' | grep -v '^note:' >"$work/recheck.txt"
    check "--check on the run's folder reproduces verdicts.txt" cmp -s "$work/recheck.txt" "$out/verdicts.txt"

    # --- a failing lockprof step: exit 1, naming the step and its log -------------------------
    cat >"$work/failing-lockprof" <<EOF
#!/bin/bash
[[ \$1 == events ]] && { echo "events: broken on purpose" >&2; exit 1; }
exec "$lockprof" "\$@"
EOF
    chmod +x "$work/failing-lockprof"
    run failing --quick --lockprof "$work/failing-lockprof" --out "$work/failing"
    check "a failing lockprof step exits 1" test "$status" -eq 1
    check "the failure names the step and its log" \
        grep -q "FAILED: the events step (lockprof exit 1): see $work/failing/events.txt" "$work/failing.out"
    check "no bundle after a failure" test ! -e "$work/failing.tar.gz"

    # --- Ctrl-C: completed steps kept, the step in progress removed, no bundle ----------------
    # Job control gives the background run its own process group with SIGINT not ignored,
    # as a terminal's foreground job has; the group gets the signal, as from Ctrl-C.
    set -m
    bash "$script" --lockprof "$lockprof" --duration 2s --out "$work/interrupted" >"$work/interrupted.out" 2>&1 &
    local pid=$! i
    set +m
    for ((i = 0; i < 200; i++)); do
        grep -q '\[3/6\] sweep' "$work/interrupted.out" && break
        sleep 0.1
    done
    sleep 0.5
    kill -INT -- "-$pid"
    wait "$pid"
    status=$?
    check "Ctrl-C during the sweep exits 130" test "$status" -eq 130
    check "Ctrl-C says what was kept" grep -q "kept $work/interrupted with the completed steps: .*machine" "$work/interrupted.out"
    check "Ctrl-C removes the unfinished sweep" test ! -e "$work/interrupted/sweep.csv"
    check "Ctrl-C keeps the completed doctor step" test -s "$work/interrupted/doctor.txt"
    check "Ctrl-C writes no summary" test ! -e "$work/interrupted/summary.md"
    check "Ctrl-C writes no bundle" test ! -e "$work/interrupted.tar.gz"
}

check_tests() {
    local dir name expected out
    for dir in "$fixtures"/*/; do
        dir=${dir%/}
        name=${dir##*/}
        out="$work/$name.out"
        bash "$script" --check "$dir" >"$out" 2>&1
        status=$?
        check "$name: --check exits 0" test "$status" -eq 0
        while IFS= read -r expected; do
            [[ -n $expected ]] || continue
            if grep -qF -- "$expected" <(cut -c1-${#expected} "$out"); then
                pass "$name: $expected"
            else
                fail "$name: expected a line starting '$expected'; got:"
                sed 's/^/  | /' "$out"
            fi
        done <"$dir/expected.txt"
        check "$name: one line per check" test "$(grep -c '^check [abc]: ' "$out")" -eq 3
    done
    # Without machine.txt the architecture comes from the flavours, the CPUs from the threads.
    mkdir -p "$work/csv-only"
    cp "$fixtures/llsc-hardware/sweep.csv" "$work/csv-only/"
    bash "$script" --check "$work/csv-only" >"$work/csv-only.out" 2>&1
    check "a folder with only sweep.csv: all confirmed" \
        test "$(grep -c '^check [abc]: confirmed' "$work/csv-only.out")" -eq 3
    # Not a lockprof CSV: a usage error, not a verdict.
    mkdir -p "$work/not-csv" && echo "hello" >"$work/not-csv/sweep.csv"
    bash "$script" --check "$work/not-csv" >"$work/not-csv.out" 2>&1
    status=$?
    check "--check of a non-lockprof CSV exits 2" test "$status" -eq 2
}

# A table row of the last run ($work/$1.out), its padding squeezed: "| host | cpu | gate | ... |".
has_row() { # has_row NAME ROW
    sed 's/  */ /g' "$work/$1.out" | grep -qxF -- "$2"
}

several_tests() {
    local fx=$fixtures
    # A second machine: llsc-hardware's run as a run on a Kunpeng whose kernel does not count
    # stxr_fail (its column empty), so check b is not measurable there; bundled as a run
    # bundles it, DIR.tar.gz holding DIR/.
    mkdir -p "$work/bundles/kunpeng-run" "$work/tmp"
    cp "$fx/llsc-hardware/sweep.csv" "$work/bundles/kunpeng-run/"
    { cat "$fx/llsc-hardware/machine.txt"; echo "host=kunpeng"; echo "cpu=Kunpeng-920 (aarch64, 8 logical CPUs)"; } \
        >"$work/bundles/kunpeng-run/machine.txt"
    awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "event_stxr_fail_per_acquire") c = i }
        NR > 1 && c { $c = "" } { print }' "$fx/llsc-hardware/sweep.csv" >"$work/bundles/kunpeng-run/sweep.csv"
    tar -C "$work/bundles" -czf "$work/kunpeng-run.tar.gz" kunpeng-run

    TMPDIR="$work/tmp" run several --check "$fx/llsc-hardware" "$work/kunpeng-run.tar.gz" "$fx/refuted/"
    check "--check on three runs exits 0" test "$status" -eq 0
    check "one header line naming the three" \
        grep -q "^validate-hardware: verdicts recomputed from 3 runs: .*llsc-hardware/sweep.csv, kunpeng-run/sweep.csv in .*kunpeng-run.tar.gz, .*refuted/sweep.csv" "$work/several.out"
    check "the table's header" has_row several "| host | cpu | gate | check a | check b | check c |"
    check "a row for llsc-hardware (the folder's name: its machine.txt has no host)" \
        has_row several "| llsc-hardware | aarch64, 8 CPUs, LSE yes | passed | confirmed | confirmed | confirmed |"
    check "a row for kunpeng (machine.txt's host and cpu, from the .tar.gz)" \
        has_row several "| kunpeng | Kunpeng-920, 8 CPUs, LSE yes | passed | confirmed | not measurable here | confirmed |"
    check "a row for refuted" has_row several "| refuted | aarch64, 8 CPUs, LSE yes | passed | refuted | refuted | refuted |"
    check "the rows in the order given" \
        test "$(grep -o '^| [a-z-]* ' "$work/several.out" | tr -d '| ' | tr '\n' ' ')" = "host llsc-hardware kunpeng refuted "
    check "each host's lines below the table, prefixed by it" \
        test "$(grep -c '^\(llsc-hardware\|kunpeng\|refuted\): \(gate\|check [abc]\): ' "$work/several.out")" -eq 12
    check "the reasons stay readable" \
        grep -q '^kunpeng: check b: not measurable here (stxr_fail was not counted)$' "$work/several.out"
    check "the verdict lines are those of one run" \
        grep -qF "refuted: $(grep '^check a: ' <(bash "$script" --check "$fx/refuted"))" "$work/several.out"
    check "the extracted bundle is removed" test -z "$(ls -A "$work/tmp")"
    TMPDIR="$work/no-such-tmp" run no-tmp --check "$work/kunpeng-run.tar.gz"
    check "... and was extracted under TMPDIR (none there: exit 1, one line)" test "$status" -eq 1
    check "... saying what to do" one_line_error no-tmp "set TMPDIR to a writable folder"

    # One .tar.gz alone prints as one folder does.
    run one-bundle --check "$work/kunpeng-run.tar.gz"
    run one-folder --check "$work/bundles/kunpeng-run"
    check "one .tar.gz: the lines of its folder" \
        cmp -s <(grep -v '^validate-hardware:' "$work/one-bundle.out") <(grep -v '^validate-hardware:' "$work/one-folder.out")
    check "one folder: no table" bash -c "! grep -q '^| host' '$work/one-folder.out'"

    # Two runs on one host: rows that differ.
    run twice --check "$fx/no-lse" "$fx/emulator-zeros" "$fx/no-lse"
    check "the same host twice: #1" \
        has_row twice "| no-lse#1 | aarch64, 4 CPUs, LSE no | passed | confirmed | confirmed | not measurable here |"
    check "the same host twice: #2" \
        has_row twice "| no-lse#2 | aarch64, 4 CPUs, LSE no | passed | confirmed | confirmed | not measurable here |"
    check "a failed gate and the virtualisation note per host" \
        grep -q '^emulator-zeros: note: measured under virtualisation or emulation: ' "$work/twice.out"
    check "the gate's word: failed" \
        has_row twice "| emulator-zeros | aarch64, 8 CPUs, LSE yes | failed | not measurable here | not measurable here | not measurable here |"

    # Usage errors among several: exit 2, one line naming the bad one, nothing for the others.
    run missing --check "$fx/llsc-hardware" "$work/no-such-folder" "$fx/refuted"
    check "a missing folder among several exits 2" test "$status" -eq 2
    check "... with one line naming it" one_line_error missing "--check $work/no-such-folder: no such folder"
    echo "not gzip" >"$work/broken.tar.gz"
    run broken --check "$fx/llsc-hardware" "$work/broken.tar.gz"
    check "a bad .tar.gz exits 2" test "$status" -eq 2
    check "... with one line naming it" one_line_error broken "--check $work/broken.tar.gz: not a readable .tar.gz"
    tar -C "$fx" -czf "$work/no-csv.tar.gz" README.md
    run no-csv --check "$work/no-csv.tar.gz" "$fx/refuted"
    check "a .tar.gz without sweep.csv exits 2" test "$status" -eq 2
    check "... with one line saying so" one_line_error no-csv "--check $work/no-csv.tar.gz: no sweep.csv in it"
}

case $mode in
quick) quick_tests ;;
check) check_tests ;;
several) several_tests ;;
*)
    echo "usage: validate_hardware_test.sh quick|check|several LOCKPROF" >&2
    exit 2
    ;;
esac
if [[ $failures -gt 0 ]]; then
    echo "validate_hardware_test $mode: $failures assertion(s) failed"
    exit 1
fi
echo "validate_hardware_test $mode: all assertions passed"
