#!/usr/bin/env bash
# The 2020 pgsql-hackers thread's decisive experiment, on the PostgreSQL installed here: a C
# function that calls XLogGetLastRemovedSegno() (one spinlock acquire and release on
# XLogCtl->info_lck) N times, run as `select drive_spinlocks(N)` under
# `pgbench -n -f bench.sql -T T -c C` at each client count, while
# `lockprof record --match postgres --spin s_lock --sample` counts every contended acquisition
# (each entry into s_lock) per call site and samples where the backends' cycles go.
#
# usage: scripts/drive-spinlocks.sh [options]
#   --clients LIST       client counts, e.g. 1,2,4 (default: 1,2,4, capped at the CPU count)
#   --duration T         pgbench time per client count: 20s, 60, 2m (default: 20s, at least 3s);
#                        lockprof records T minus 2 s, from 1 s after pgbench starts
#   --calls N            XLogGetLastRemovedSegno() calls per transaction (default: 50000, the
#                        thread's figure)
#   --out DIR            results folder (default: ./drive-spinlocks-DATE-TIME)
#   --lockprof PATH      the lockprof binary (default: build/lockprof of this checkout)
#   --sample-event E     sampling event (default: cycles; lockprof falls back to cpu-clock
#                        where the CPU has no hardware counters, as in most VMs)
#   --call-graph G       fp or dwarf[,SIZE], passed to lockprof record (default fp): dwarf
#                        unwinds the samples' and s_lock's entries' stacks from
#                        .eh_frame, also through the functions of glibc and postgres that
#                        have no frame pointers
#   -h, --help           this text
#
# The module (bench/drive_spinlocks/drive_spinlocks.c) is built with PGXS into DIR/module
# against the server's headers (Debian: apt-get install postgresql-server-dev-NN, NN the
# server's major version) and loaded into a throwaway cluster (scripts/lib/pg-cluster.sh) with
# CREATE FUNCTION ... AS 'DIR/module/drive_spinlocks.so': nothing is installed under the
# server's own folders. The cluster listens on 127.0.0.1 only and is stopped and removed on
# exit, Ctrl-C included.
#
# Per client count C, DIR holds C.txt (lockprof's report: counters, hottest symbols, spin-lock
# view, spin slow paths per call site), C.json (the same as data), C.folded (the samples' folded
# stacks), C.spin.folded (s_lock's time per call site, with --call-graph dwarf per call stack),
# C.pgbench.log; DIR/summary.md puts tps next to s_lock's entries, time and call sites.
# Needs root or CAP_PERFMON (uprobes and attaching to the server's processes) and jq (installed
# with apt-get when missing and running as root).
# Exit status: 0 every client count recorded, 1 a step failed, 2 bad usage.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cluster_script="$root/scripts/lib/pg-cluster.sh"
# shellcheck source=lib/pgbench-run.sh
source "$root/scripts/lib/pgbench-run.sh"
module_source="$root/bench/drive_spinlocks"

die() { echo "drive-spinlocks: $*" >&2; exit 1; }
usage() { echo "drive-spinlocks: $*; see scripts/drive-spinlocks.sh --help" >&2; exit 2; }

default_clients() {
    local n c list=""
    n=$(nproc)
    for c in 1 2 4; do ((c <= n)) && list+="${list:+,}$c"; done
    echo "$list"
}

clients=$(default_clients)
duration=20s
calls=50000
out="./drive-spinlocks-$(date +%Y%m%d-%H%M%S)"
lockprof="$root/build/lockprof"
sample_event=cycles
call_graph=fp

while (($#)); do
    case $1 in
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        --clients | --duration | --calls | --out | --lockprof | --sample-event | --call-graph)
            (($# >= 2)) || usage "$1 needs a value"
            case $1 in
                --call-graph) call_graph=$2 ;;
                --clients) clients=$2 ;;
                --duration) duration=$2 ;;
                --calls) calls=$2 ;;
                --out) out=$2 ;;
                --lockprof) lockprof=$2 ;;
                --sample-event) sample_event=$2 ;;
            esac
            shift 2 ;;
        --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
        *) usage "unknown argument '$1'" ;;
    esac
done

[[ $clients =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
    usage "--clients '$clients' is not a list of positive numbers like 1,2,4"
IFS=, read -r -a client_list <<<"$clients"
case $duration in
    *[!0-9smh]* | "" | [smh]*) usage "--duration '$duration' is not a time like 20s, 60 or 2m" ;;
    *m) seconds=$((${duration%m} * 60)) ;;
    *h) seconds=$((${duration%h} * 3600)) ;;
    *s) seconds=${duration%s} ;;
    *) seconds=$duration ;;
esac
[[ $seconds =~ ^[0-9]+$ ]] || usage "--duration '$duration' is not a time like 20s, 60 or 2m"
((seconds >= 3)) || usage "--duration '$duration' is too short; lockprof needs at least 3s runs"
[[ $calls =~ ^[1-9][0-9]{0,8}$ ]] ||
    usage "--calls '$calls' is not a positive number below 10^9 (a PostgreSQL integer)"

[[ -x $lockprof ]] ||
    die "no lockprof at '$lockprof'; build it (scripts/build.sh) or pass --lockprof PATH"
# The help is read whole first: `grep -q` quits at its match, and under pipefail the
# SIGPIPE lockprof then gets would read as a failure.
record_help=$("$lockprof" record --help 2>/dev/null) || record_help=""
[[ $record_help == *--spin* ]] ||
    die "'$lockprof' has no record --spin; rebuild it from a current checkout"
[[ $call_graph == fp || $record_help == *--call-graph* ]] ||
    die "'$lockprof' has no record --call-graph; rebuild it from a current checkout"
bin=$(bash "$cluster_script" bin 2>&1) || die "${bin#pg-cluster: }"
pgbench="$bin/pgbench" psql="$bin/psql"
[[ -x $pgbench && -x $psql ]] ||
    die "no pgbench or psql in $bin; install them (Debian: apt-get install postgresql-client)"
major=$("$bin/postgres" --version | sed -n 's/.* \([0-9][0-9]*\)\.[0-9].*/\1/p')
pg_config="$bin/pg_config"
[[ -x $pg_config && -d $("$pg_config" --includedir-server 2>/dev/null)/access ]] ||
    die "PostgreSQL ${major:-?}'s server headers are missing (no $pg_config or its include" \
        "folder); install them (Debian: apt-get install postgresql-server-dev-${major:-NN})"
command -v make >/dev/null && command -v cc >/dev/null ||
    die "make and a C compiler are needed to build the module (Debian: apt-get install build-essential)"
if ! command -v jq >/dev/null; then
    ((EUID == 0)) || die "jq is missing and needed to read lockprof's JSON; apt-get install jq"
    echo "drive-spinlocks: installing jq (apt-get)" >&2
    { apt-get install -y -q jq || { apt-get update -q && apt-get install -y -q jq; }; } \
        >/dev/null 2>&1 || die "apt-get install jq failed; install jq and run again"
fi

mkdir -p "$out" || die "cannot create '$out'"
out=$(cd "$out" && pwd)

# The module is built out of the source tree (PGXS writes next to its sources).
rm -rf "$out/module"
mkdir -p "$out/module"
cp "$module_source/drive_spinlocks.c" "$module_source/Makefile" "$out/module/"
make -C "$out/module" PG_CONFIG="$pg_config" with_llvm=no >"$out/module/build.log" 2>&1 ||
    die "building the module failed: $(grep -m1 -i 'error' "$out/module/build.log" || tail -n 1 "$out/module/build.log") (log: $out/module/build.log)"
so="$out/module/drive_spinlocks.so"

# The server runs as user postgres when we are root; it must reach the cluster folder and the
# module, and the cluster's socket path must stay short (sun_path).
cluster="$out/cluster"
if ((${#cluster} > 80)) || { ((EUID == 0)) && ! runuser -u postgres -- test -r "$so"; }; then
    cluster=$(mktemp -d "${TMPDIR:-/tmp}/drive-spinlocks-cluster.XXXXXX")
    chmod 755 "$cluster"
    cp "$so" "$cluster/drive_spinlocks.so"
    so="$cluster/drive_spinlocks.so"
    cluster="$cluster/c"
fi

pgbench_pid="" lockprof_pid=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    # Background jobs of a script ignore SIGINT, so TERM, then KILL after 5 s.
    local pid tries
    for pid in $lockprof_pid $pgbench_pid; do
        kill -TERM "$pid" 2>/dev/null || continue
        for ((tries = 0; tries < 50; tries++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    bash "$cluster_script" stop "$cluster" || true
    if [[ $cluster != "$out/cluster" ]]; then
        rm -f "$(dirname "$cluster")/drive_spinlocks.so"
        rmdir "$(dirname "$cluster")" 2>/dev/null || true
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(bash "$cluster_script" start-any "$cluster" 2>"$out/cluster-start.log") ||
    die "the PostgreSQL cluster did not start: $(tail -n 1 "$out/cluster-start.log")"
rm -f "$out/cluster-start.log"
connect=(-h 127.0.0.1 -p "$port" -U postgres)
echo "drive-spinlocks: cluster on 127.0.0.1:$port ($cluster), module $so" >&2
"$psql" "${connect[@]}" -X -q -v ON_ERROR_STOP=1 -d postgres >"$out/create-function.log" 2>&1 <<EOF ||
CREATE FUNCTION drive_spinlocks(calls integer) RETURNS bigint
    AS '$so', 'drive_spinlocks' LANGUAGE C STRICT VOLATILE;
SELECT drive_spinlocks(10);
EOF
    die "loading the module failed: $(tail -n 1 "$out/create-function.log")"
echo "select drive_spinlocks($calls);" >"$out/bench.sql"

failed=0
rows=()
for c in "${client_list[@]}"; do
    echo "drive-spinlocks: $c client(s): pgbench -n -f bench.sql -c $c -T $seconds," \
        "lockprof record $((seconds - 2))s" >&2
    "$pgbench" "${connect[@]}" -n -f "$out/bench.sql" -c "$c" -j "$c" -T "$seconds" postgres \
        >"$out/$c.pgbench.log" 2>&1 &
    pgbench_pid=$!
    sleep 1  # clients connected, backends forked
    "$lockprof" record --match postgres --duration "$((seconds - 2))s" --spin s_lock --sample \
        --sample-event "$sample_event" --call-graph "$call_graph" --output "$out/$c.json" \
        --folded "$out/$c.folded" --spin-folded "$out/$c.spin.folded" \
        >"$out/$c.txt" 2>"$out/$c.lockprof.log" &
    lockprof_pid=$!
    pgbench_run_collect "$out/$c.pgbench.log"
    if ((pgbench_status)) || [[ -z $tps ]]; then
        echo "drive-spinlocks: $c client(s): pgbench failed: $(tail -n 1 "$out/$c.pgbench.log")" >&2
        tps="failed"
        failed=1
    else
        tps=$(printf '%.2f' "$tps")
    fi
    if ((lockprof_status)) || [[ ! -s $out/$c.json ]]; then
        echo "drive-spinlocks: $c client(s): lockprof record failed (status $lockprof_status):" \
            "$(tail -n 1 "$out/$c.lockprof.log")" >&2
        rows+=("| $c | $tps | lockprof failed | | | | | | see $c.lockprof.log |")
        failed=1
        continue
    fi
    # tps, then s_lock: entries, entries per second, the slow path's total and mean time, its
    # sleeps (s_lock's results), the share of samples in spin-lock code, and the call sites by
    # entries (at most three).
    rows+=("$(jq -r --arg c "$c" --arg tps "$tps" '
        def ms: . / 1e6 | . * 100 | round / 100 | tostring + " ms";
        def us: . / 1e3 | . * 100 | round / 100 | tostring + " us";
        def pct: (. // 0) * 1000 | round / 10 | tostring + "%";
        (.duration_s // 0) as $d
        | (.spin_calls // {entries: 0, total_ns: 0, timed: 0, sites: []}) as $s
        | "| \($c) | \($tps) | \($s.entries) | "
          + (if $d > 0 then ($s.entries / $d | . * 10 | round / 10 | tostring) else "?" end)
          + " | \($s.total_ns | ms) | "
          + (if $s.timed > 0 then ($s.total_ns / $s.timed | us) else "" end)
          + " | \($s.sleeps // "") | \(.spin_locks.share | pct) | "
          + ([$s.sites | sort_by(-.entries) | .[:3][]
              | "\(.site) (\(.entries))"] | join(", ") | if . == "" then "none" else . end)
          + " |"' "$out/$c.json")")
done

{
    echo "# drive_spinlocks, $(date '+%Y-%m-%d %H:%M')"
    echo
    echo "- machine: $(uname -m), $(nproc) CPUs," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
        "kernel $(uname -r)"
    echo "- PostgreSQL: $("$bin/postgres" --version), throwaway cluster, default settings"
    echo "- pgbench: \`-n -f bench.sql -c C -j C -T $seconds\`, bench.sql =" \
        "\`select drive_spinlocks($calls);\` ($calls XLogGetLastRemovedSegno() calls per" \
        "transaction); tps is pgbench's whole run"
    echo "- lockprof: \`record --match postgres --spin s_lock --sample --sample-event" \
        "$sample_event --call-graph $call_graph\`, $((seconds - 2)) s per run from 1 s after pgbench started; s_lock" \
        "entries are contended acquisitions (the inlined first TAS failed), counted exactly by a" \
        "uprobe; time is entry to return (spinning and pg_usleep sleeps); sleeps are s_lock's" \
        "results (perform_spin_delay's pg_usleep calls); sites are s_lock's file:line and func" \
        "arguments"
    echo
    echo "| clients | tps | s_lock entries | entries/s | time in s_lock | mean | sleeps | spin-lock samples | call sites (entries) |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
} >"$out/summary.md"
cat "$out/summary.md"
echo "drive-spinlocks: results in $out" >&2
exit "$failed"
