#!/bin/bash
# Runs inside the emulated arm64 system (scripts/test-arm-system.sh boots it; /init of
# scripts/lib/arm-system-init.sh starts this as root in the guest's root disk):
#   guest.sh MODEL OUT
# MODEL is the -cpu model the guest was booted with; it picks the steps. Each step's stdout,
# stderr and exit status go to OUT/STEP.out, .err, .rc; results lockprof writes (JSON, CSV,
# reports) go under OUT too. Nothing is checked here: the host reads OUT and asserts
# (tests/arm-system/check.py), so a failed step still leaves its evidence.
set -u
model=$1
out=$2
cd /tmp || exit 1
# Written by the host into the root disk: where lockprof and its test binaries are. They keep
# their host paths, because the CLI tests run the binary at the path compiled into them.
. /stage/paths.sh
export PATH="$LOCKPROF_BUILD:/usr/bin:/bin"
export HOME=/tmp TMPDIR=/tmp

step() {  # step NAME CMD... : runs CMD, keeps its output and exit status
    local name=$1
    shift
    local start=$SECONDS
    "$@" >"$out/$name.out" 2>"$out/$name.err"
    echo $? >"$out/$name.rc"
    echo "step $name: exit $(cat "$out/$name.rc") in $((SECONDS - start)) s"
}
# limited_step NAME SECONDS CMD... : a step stopped (SIGTERM, then SIGKILL 10 s later) after
# SECONDS, so that a slow or hung test still leaves this guest's outputs for the host, which
# names the test that was running (NAME.timeout holds the limit). The host's limit for the
# whole guest (scripts/test-arm-system.sh) is above the sum of these.
limited_step() {
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    step "$name" timeout -s TERM -k 10 "$limit" "$@"
    if ((SECONDS - start >= limit)); then echo "$limit" >"$out/$name.timeout"; fi
}

lp=$LOCKPROF_BUILD/lockprof
# Each guest is a host of its own in the cross-host report (`hosts` steps below): its name says
# which CPU model it emulated.
hostname "qemu-system-$model" 2>/dev/null || true
echo "model $model, kernel $(uname -r), $(nproc) CPUs"
cat /proc/cmdline
step doctor "$lp" doctor
step events "$lp" events
ls /sys/bus/event_source/devices >"$out/event_sources.txt"

# One host's result for the cross-host report (`lockprof report A.json B.json ...`,
# docs/reports.md): the locks, thread counts and trials every host of tests/fixtures/hosts ran.
# The default events (cycles, stxr_fail, ... where the PMU has them), so no observer-effect twins.
hosts_step() {
    step hosts "$lp" --lock tas,cas --threads 1,2 --duration 30ms --trials 8 -o "$out/hosts.json"
}

case $model in
neoverse-n1)
    # Booted with -icount shift=0: every instruction advances the virtual clock by 1 ns and
    # QEMU's PMU counts instructions (and cycles) exactly.
    # No work in the loop (--shared-lines 0, no critical or parallel work), one thread: each
    # iteration runs the same instructions, which the host counts in the disassembly.
    local_loop=(--threads 1 --delay none --shared-lines 0)
    # Three trials, pinned: under a loaded host QEMU 7.2's PMU at times counts more than the
    # user-mode instructions retired (seen in CI: +0.07 per acquire, about the kernel's own
    # instructions in the window), never fewer; the host checks the trial with the least.
    step exact "$lp" --lock tas@llsc,cas@llsc "${local_loop[@]}" --trials 3 --pin compact \
        --duration 100ms --event cycles,instructions -o "$out/exact.json"
    # More hardware events than the PMU's 6 programmable counters (plus the cycle counter):
    # split into groups and multiplexed; the scaled values must agree with the exact run.
    step multiplex "$lp" --lock tas@llsc "${local_loop[@]}" --trials 1 --duration 400ms \
        --event cycles,instructions,stxr_fail,stxr_pass,strex,ldrex,bus_access,mem_access,arm_n1::INST_RETIRED,arm_n1::CPU_CYCLES,arm_n1::BR_RETIRED,arm_n1::INST_SPEC \
        -o "$out/multiplex.json"
    # Four threads on one CPU, 200 instructions held: the guest's scheduler preempts holders
    # and waiters spin, so the acquire loop gathers the cycles samples, as many as the counted
    # instructions say (tests/arm-system/check.py).
    step sample "$lp" --lock tas@llsc --threads 4 --pin 0 --critical-ins 200 --shared-lines 0 \
        --delay none --duration 1s --trials 1 \
        --event cycles,instructions --sample-event cycles --sampler perf --annotate-top 1 \
        --samples-out "$out/samples.json" -o "$out/sample.json"
    step record "$lp" record --event cycles,instructions --sample-event cycles \
        --output "$out/record.json" --folded "$out/record.folded" -- \
        "$lp" --lock tas@llsc --threads 1 --delay none --duration 200ms --trials 1 \
        --no-counters -q
    ;;
neoverse-n1-tests)
    # No icount (multi-threaded TCG, quicker): the test binaries' hardware paths, which skip
    # on machines without a PMU, and the validation script.
    # What a first run with the default events shows on this PMU.
    step defaults "$lp" --lock tas,cas --threads 2 --duration 100ms --trials 1
    limited_step unit 240 "$LOCKPROF_BUILD/tests/lockprof_unit_tests" --gtest_color=no \
        --gtest_output="xml:$out/unit.xml" --gtest_filter="$LOCKPROF_GUEST_UNIT_FILTER"
    limited_step cli 600 "$LOCKPROF_BUILD/tests/lockprof_cli_tests" --gtest_color=no \
        --gtest_output="xml:$out/cli.xml" --gtest_filter="$LOCKPROF_GUEST_CLI_FILTER"
    if [[ -x $LOCKPROF_SOURCE/scripts/validate-hardware.sh ]]; then
        limited_step validate 240 bash "$LOCKPROF_SOURCE/scripts/validate-hardware.sh" --quick \
            --lockprof "$lp" --out "$out/validate"
    fi
    ;;
cortex-a57)
    # ARMv8.0 without LSE: @lse refused before any of its code runs, LL/SC and outline counted.
    step refuse "$lp" --lock tas@lse --threads 1 --duration 20ms
    step count "$lp" --lock tas@llsc,cas@llsc,tas@outline --threads 1 --delay none \
        --duration 100ms --trials 1 --event cycles,stxr_fail -o "$out/count.json"
    hosts_step
    ;;
max)
    # An implementer libpfm4 has no table for: the raw-code fallbacks (r6e, ...) are encoded
    # and the kernel opens them.
    step count "$lp" --lock tas@llsc,tas@lse --threads 1 --delay none --duration 100ms \
        --trials 1 --event cycles,stxr_fail,stxr_pass -o "$out/count.json"
    hosts_step
    ;;
*)
    echo "guest.sh: unknown model '$model'" >&2
    exit 2
    ;;
esac
