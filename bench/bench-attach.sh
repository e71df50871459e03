#!/usr/bin/env bash
# Attach overhead on a running server, measured side by side in one run: PostgreSQL serving
# `pgbench -S -c 2` on a throwaway cluster (scripts/lib/pg-cluster.sh), alone, with
# `lockprof record --match postgres` counting the default events, with `--sample` at its
# default rate (1000 Hz), and under `perf record -F 1000 -g -p <server pids>`. Rounds interleave
# the four so drift of a shared machine hits all alike. Each run is pgbench -T SECONDS with
# per-second progress (-P 1); a tool attaches 1 s in for SECONDS-2 s, and tps is taken over the
# seconds the tool is attached (3 to SECONDS-1; the same window when nothing attaches). Prints
# medians and the ratios to pgbench alone.
#
# usage: bench/bench-attach.sh [BUILD_DIR] [ROUNDS] [SECONDS]
#   BUILD_DIR  folder holding the lockprof binary (default: build)
#   ROUNDS     interleaved rounds (default: 3)
#   SECONDS    pgbench time per run (default: 10, at least 5)
set -euo pipefail

build=${1:-build}
rounds=${2:-3}
seconds=${3:-10}
lockprof="$build/lockprof"
root="$(cd "$(dirname "$0")/.." && pwd)"
cluster_script="$root/scripts/lib/pg-cluster.sh"
[[ -x $lockprof ]] || { echo "bench-attach: no lockprof in '$build'; build it first" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-attach: ROUNDS '$rounds' is not a positive number" >&2; exit 2; }
if [[ ! $seconds =~ ^[0-9]+$ ]] || ((seconds < 5)); then
    echo "bench-attach: SECONDS '$seconds' must be a number of seconds, at least 5" >&2
    exit 2
fi
"$lockprof" record --help >/dev/null 2>&1 ||
    { echo "bench-attach: '$lockprof' has no record command; rebuild it" >&2; exit 1; }
bin=$(bash "$cluster_script" bin 2>&1) || { echo "bench-attach: ${bin#pg-cluster: }" >&2; exit 1; }
rate=1000  # lockprof's default --sample-freq
attach=$((seconds - 2))

tmp=$(mktemp -d)
chmod 755 "$tmp"  # the server runs as user postgres when we are root
tool_pid="" pgbench_pid=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    for pid in $tool_pid $pgbench_pid; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash "$cluster_script" stop "$tmp/cluster" || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(bash "$cluster_script" start-any "$tmp/cluster" 2>"$tmp/start.log") ||
    { echo "bench-attach: $(tail -n 1 "$tmp/start.log")" >&2; exit 1; }
connect=(-h 127.0.0.1 -p "$port" -U postgres)
"$bin/pgbench" "${connect[@]}" -i -s 10 -q postgres >"$tmp/init.log" 2>&1 ||
    { echo "bench-attach: pgbench -i failed: $(tail -n 1 "$tmp/init.log")" >&2; exit 1; }

# perf samples cycles where the CPU counts them, else falls back to cpu-clock itself (as
# lockprof does); the probe tells which, for the label.
perf_event=""
if command -v perf >/dev/null &&
        perf record -q -F "$rate" -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
    perf_event=$(perf evlist -i "$tmp/probe.data" 2>/dev/null | head -n 1 | sed 's/:.*//')
    perf_event=${perf_event:-cycles}
fi

server_pids() {  # the postmaster and its children, comma-separated
    local postmaster
    postmaster=$(head -n 1 "$tmp/cluster/data/postmaster.pid")
    echo "$postmaster${postmaster:+,}$(pgrep -d, -P "$postmaster")"
}

# One pgbench run with TOOL (none, count, sample, perf) attached; appends its tps to $tmp/TOOL.
run() {
    local tool=$1
    "$bin/pgbench" "${connect[@]}" -S -c 2 -j 2 -T "$seconds" -P 1 postgres \
        >"$tmp/pgbench.out" 2>"$tmp/pgbench.log" &
    pgbench_pid=$!
    sleep 1
    case $tool in
        count) "$lockprof" record --match postgres --duration "${attach}s" >"$tmp/tool.log" 2>&1 & ;;
        sample) "$lockprof" record --match postgres --sample --duration "${attach}s" \
                    >"$tmp/tool.log" 2>&1 & ;;
        perf) perf record -q -F "$rate" -g -p "$(server_pids)" \
                  -o "$tmp/perf.data" -- sleep "$attach" >"$tmp/tool.log" 2>&1 & ;;
        none) sleep "$attach" & ;;
    esac
    tool_pid=$!
    local tool_status=0
    wait "$tool_pid" || tool_status=$?
    tool_pid=""
    wait "$pgbench_pid" ||
        { echo "bench-attach: pgbench failed: $(tail -n 1 "$tmp/pgbench.log")" >&2; exit 1; }
    pgbench_pid=""
    ((tool_status == 0)) ||
        { echo "bench-attach: $tool failed (status $tool_status): $(tail -n 1 "$tmp/tool.log")" >&2; exit 1; }
    # "progress: 5.0 s, 27120.9 tps, lat 0.073 ms ..." covers the second before 5.0 s.
    awk -v from=3 -v to=$((seconds - 1)) '
        $1 == "progress:" { t = $2 + 0; if (t >= from && t <= to) { sum += $4; n++ } }
        END { if (n) printf "%.1f\n", sum / n; else exit 1 }' "$tmp/pgbench.log" >>"$tmp/$tool" ||
        { echo "bench-attach: no pgbench progress lines in the window; see pgbench -P" >&2; exit 1; }
}

tools=(none count sample)
[[ -n $perf_event ]] && tools+=(perf)
for tool in "${tools[@]}"; do : >"$tmp/$tool"; done
for ((round = 1; round <= rounds; round++)); do
    for tool in "${tools[@]}"; do run "$tool"; done
    echo "round $round/$rounds done" >&2
done

python3 - "$tmp" "$seconds" "$perf_event" <<'PY'
import statistics, sys
tmp, seconds, perf_event = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(name):
    return [float(x) for x in open(f"{tmp}/{name}") if x.strip()]
none = load("none")
base = statistics.median(none)
def show(label, name):
    values = load(name)
    median = statistics.median(values)
    print(f"  {label:<44} median {median:9.0f} tps (min {min(values):.0f}, max {max(values):.0f}, "
          f"{len(values)} rounds)  / alone {median / base:.3f}")
print(f"pgbench -S -c 2 -j 2, scale 10, {seconds} s per run; tps over seconds 2-{seconds - 1} "
      "(tool attached); rounds interleaved:")
show("pgbench alone", "none")
show("lockprof record --match postgres (counting)", "count")
show("lockprof record --match postgres --sample", "sample")
if perf_event:
    show(f"perf record -F 1000 -g -p PIDS ({perf_event})", "perf")
else:
    print("  perf record: not run (perf missing or not permitted here)")
PY
