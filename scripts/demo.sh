#!/usr/bin/env bash
# The first answer on a fresh Debian machine: installs what is missing, builds lockprof (the
# binary only; scripts/test.sh builds the tests), and runs TAS vs TTAS vs CAS as the 2020
# PostgreSQL thread's profile has them (profiles/tas-vs-cas.ini) at the thread counts this
# machine has CPUs for, with --trials auto under a time budget, so that its verdicts settle.
#   scripts/demo.sh [LOCKPROF OPTIONS...]   extra options go to lockprof and replace the demo's
#                                           own (--profile, --threads, --duration, --trials,
#                                           --max-time, --output)
#   scripts/demo.sh --print-plan [...]      print the lockprof command it would run, and exit
#   LOCKPROF_DEMO_CPUS=N                    test seam: plan for N CPUs instead of this
#                                           machine's count (tests/cli/demo_test.sh)
# One line per step, each with the time since the start; on a terminal ninja's and lockprof's
# own progress lines, on a pipe a line every 20 s instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
profile="$root/profiles/tas-vs-cas.ini"
build="$root/build"
start=$SECONDS

# The plan's figures, from runs on the 2-core development VM (docs/reports.md, "The demo's
# plan"): 200 ms trials gave about four times as many trials per cell as the profile's 1 s in
# the same budget and narrower intervals; 10 s per cell decided cas against tas at both
# thread counts in every run there, 5 s did not. At most 3 minutes on machines with many
# thread counts.
trial_duration=200ms
budget_per_cell_s=10
budget_max_s=180

fail() { echo "demo.sh: $*" >&2; exit 1; }
usage_error() { echo "demo.sh: $*" >&2; exit 2; }
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
clock() { mmss $((SECONDS - start)); }
say() { echo "[$(clock)] demo: $*"; }

print_plan=0
args=()
for arg in "$@"; do
  if [[ $arg == --print-plan ]]; then print_plan=1; else args+=("$arg"); fi
done
# given OPTION [SHORT]: the extra options name it (--opt, --opt=V, -s, -sV).
given() {
  local a
  for a in "${args[@]}"; do
    [[ $a == "$1" || $a == "$1="* ]] && return 0
    [[ -n ${2:-} && $a == "$2"* ]] && return 0
  done
  return 1
}
# profile_value KEY: the value of KEY in the profile, spaces removed.
profile_value() { sed -n "s/^$1 *= *//p" "$profile" | tr -d ' '; }

cpus="${LOCKPROF_DEMO_CPUS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}"
[[ $cpus =~ ^[1-9][0-9]*$ ]] ||
  usage_error "LOCKPROF_DEMO_CPUS='$cpus' is not a CPU count; give a whole number from 1, or unset it"

# The plan: powers of two up to the CPU count and the count itself, with the profile's own
# counts (the thread's 128-1024) where there are CPUs for them; the others are left out, since
# more spinning threads than CPUs measure the scheduler's time slices more than the lock.
counts=()
for ((n = 1; n < cpus; n *= 2)); do counts+=("$n"); done
counts+=("$cpus")
left_out=()
IFS=, read -r -a profile_counts <<<"$(profile_value threads)"
for n in "${profile_counts[@]}"; do
  if ((n <= cpus)); then counts+=("$n"); else left_out+=("$n"); fi
done
mapfile -t counts < <(printf '%s\n' "${counts[@]}" | sort -n -u)
threads=$(IFS=,; echo "${counts[*]}")
IFS=, read -r -a locks <<<"$(profile_value lock)"
cells=$((${#locks[@]} * ${#counts[@]}))
budget_s=$((cells * budget_per_cell_s < budget_max_s ? cells * budget_per_cell_s : budget_max_s))

plan=()
given --profile -p || plan+=(--profile "$profile")
given --threads -t || plan+=(--threads "$threads")
given --duration -d || given --acquires -n || plan+=(--duration "$trial_duration")
# A --trials of the caller's is theirs to complete (--trials auto needs its --max-time).
given --trials || plan+=(--trials auto)
given --trials || given --max-time || plan+=(--max-time "${budget_s}s")
result="$build/demo.json"
given --output -o || plan+=(--output "$result")
plan+=("${args[@]}")
# The result file the summary reads: the caller's --output where one was given.
for ((i = 0; i < ${#plan[@]}; i++)); do
  case ${plan[i]} in
    --output | -o) result=${plan[i + 1]:-} ;;
    --output=*) result=${plan[i]#--output=} ;;
    -o?*) result=${plan[i]#-o} ;;
  esac
done

left_out_line=""
if ((${#left_out[@]} > 0)) && ! given --threads -t; then
  listed=$(IFS=,; echo "${left_out[*]:0:${#left_out[@]}-1}")
  listed=${listed//,/, }
  if [[ -n $listed ]]; then listed+=" and ${left_out[-1]}"; else listed=${left_out[-1]}; fi
  plural=s
  ((cpus > 1)) || plural=""
  left_out_line="$listed threads (the thread's counts in profiles/tas-vs-cas.ini) left out: this machine has $cpus CPU$plural, and more spinning threads than CPUs measure the scheduler's time slices, not the lock; to run them anyway: build/lockprof --profile profiles/tas-vs-cas.ini"
fi

# words WORD...: the words as a shell reads them back, quoted only where they need it.
words() {
  local w q="'" out=""
  for w in "$@"; do
    if [[ $w =~ ^[A-Za-z0-9_./=,:@%+-]+$ ]]; then out+=" $w"; else out+=" '${w//$q/$q\\$q$q}'"; fi
  done
  echo "${out# }"
}
if [[ $print_plan == 1 ]]; then
  echo "lockprof $(words "${plan[@]}")"
  [[ -z $left_out_line ]] || echo "$left_out_line"
  exit 0
fi

terminal=0
[[ -t 1 ]] && terminal=1
child=""
# Ctrl-C or SIGTERM: pass it to the build or the run in the background (on a pipe), which
# then stops as lockprof does (it writes the finished trials).
on_signal() {
  [[ -z $child ]] || kill -s "$1" "$child" 2>/dev/null || true
  [[ -z $child ]] || wait "$child" 2>/dev/null || true
  [[ ! -s ${run_out:-} ]] || cat "$run_out"
  say "stopped by SIG$1"
  if [[ $1 == INT ]]; then exit 130; else exit 143; fi
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockprof-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# wait_for PID WHAT STATUS-FUNCTION: waits for the job; on a pipe prints "WHAT: STATUS" every
# 20 s. Returns the job's exit status.
wait_for() {
  local last=$SECONDS status=0
  child=$1
  while kill -0 "$child" 2>/dev/null; do
    sleep 1
    if ((terminal == 0 && SECONDS - last >= 20)); then
      last=$SECONDS
      say "  $2: $($3)"
    fi
  done
  wait "$child" || status=$?
  child=""
  return "$status"
}

say "1/4 packages: scripts/setup.sh installs what is missing"
"$root/scripts/setup.sh"

say "2/4 build: configuring build/ (RelWithDebInfo) and building lockprof alone; the tests are scripts/test.sh's"
# As scripts/test.sh configures a clean build (its comments say why), so that running it later
# in the same build/ reuses these objects.
export CXXFLAGS="${CXXFLAGS:-} -fno-var-tracking-assignments"
export LOCKPROF_UNITY_BUILD=1
build_log="$tmp/build.log"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build_log" 2>&1 || {
  tail -n 30 "$build_log" >&2
  fail "configuring build/ failed (cmake's last lines above); check the packages (scripts/setup.sh) and rerun"
}
build_start=$SECONDS
build_progress() {
  local line
  line=$(grep -o '^\[[0-9]*/[0-9]*\]' "$build_log" | tail -n 1 | tr -d '[]')
  echo "${line%/*} of ${line#*/} steps done"
}
if ((terminal)); then
  ninja -C "$build" lockprof || fail "building lockprof failed (ninja's errors above)"
else
  ninja -C "$build" lockprof >"$build_log" 2>&1 </dev/null &
  wait_for $! build build_progress || {
    grep -v '^\[' "$build_log" | tail -n 40 >&2
    fail "building lockprof failed (the compiler's last lines above)"
  }
fi
build_s=$((SECONDS - build_start))

say "3/4 doctor: what this machine can count"
"$build/lockprof" doctor || true

shown=$(words "${plan[@]}")
say "4/4 run: build/lockprof ${shown//"$root"\//}"
[[ -z $left_out_line ]] || say "$left_out_line"
run_start=$SECONDS
given --output -o || rm -f "$result"   # so that no earlier run's file is summarised
run_out="$tmp/run.txt"
run_status=0
run_progress() {
  if given --trials || given --max-time; then echo "$((SECONDS - run_start)) s"; else
    echo "$((SECONDS - run_start)) s of its ${budget_s} s budget"
  fi
}
if ((terminal)); then
  "$build/lockprof" "${plan[@]}" || run_status=$?
else
  "$build/lockprof" "${plan[@]}" >"$run_out" 2>"$tmp/run.err" </dev/null &
  wait_for $! run run_progress || run_status=$?
  cat "$run_out"
  cat "$tmp/run.err" >&2
fi
((run_status == 0)) || fail "lockprof exited with $run_status (its message above)"
run_s=$((SECONDS - run_start))

# What settled, or where nothing did, why, in one line (scripts/lib/demo-summary.py).
summary=$(python3 "$root/scripts/lib/demo-summary.py" "$result" "$run_s") || summary="no summary: $result could not be read (the line above says why)"
say "$summary"
say "done in $(clock) (build $(mmss "$build_s"), run $(mmss "$run_s")); the result file: ${result#"$root"/}"
say "the thread's exact shape, ${profile_counts[0]}-${profile_counts[-1]} threads, for machines with the CPUs for them: build/lockprof --profile profiles/tas-vs-cas.ini"
say "next: scripts/demo.sh --sample --report=r.html (where the time goes, per instruction, on one page with plots); build/lockprof record --pid PID --duration 10s (a running program); build/lockprof --help"
