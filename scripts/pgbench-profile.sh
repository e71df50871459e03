#!/usr/bin/env bash
# Where does PostgreSQL spend its time under pgbench, and how much of it spinning? Reproduces the
# 2020 pgsql-hackers experiment (spinlocks on ARM) on any machine with PostgreSQL installed: for
# each pgbench mode and client count, a pgbench run on a throwaway cluster while
# `lockprof record --match postgres --sample` attaches to every server process.
#
# usage: scripts/pgbench-profile.sh [options]
#   --clients LIST       client counts, e.g. 1,4,16 (default: 1,2,4,... up to nproc, and nproc)
#   --modes LIST         select-only (pgbench -S), tpcb-like (pgbench's default script)
#                        (default: select-only,tpcb-like)
#   --duration T         pgbench time per run: 10s, 90, 2m (default: 10s, at least 3s);
#                        lockprof records T minus 2 s, from 1 s after pgbench starts
#   --scale N            pgbench -i scale factor, 100,000 accounts per unit (default: 10)
#   --out DIR            results folder (default: ./pgbench-profile-DATE-TIME)
#   --lockprof PATH      the lockprof binary (default: build/lockprof of this checkout)
#   --sample-event E     sampling event (default: cycles; lockprof falls back to cpu-clock
#                        where the CPU has no hardware counters, as in most VMs)
#   -h, --help           this text
#
# Per run MODE-C (e.g. select-only-4) DIR holds: MODE-C.txt (lockprof's counter table, hottest
# symbols, annotation, spin-lock line), MODE-C.json (the same as data), MODE-C.folded and
# MODE-C.svg (flamegraph), MODE-C.pgbench.log. DIR/summary.md tabulates tps, the share of
# samples in spin-lock code and the hottest symbol per run.
#
# The cluster (scripts/lib/pg-cluster.sh) lives in DIR/cluster (in /tmp when user postgres cannot
# reach DIR), listens on 127.0.0.1 only, and is stopped and removed on exit, Ctrl-C included.
# Needs PostgreSQL (Debian: apt-get install postgresql) and jq (installed with apt-get when
# missing and running as root). Exit status: 0 all runs recorded, 1 a step failed, 2 bad usage.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cluster_script="$root/scripts/lib/pg-cluster.sh"
# shellcheck source=lib/pgbench-run.sh
source "$root/scripts/lib/pgbench-run.sh"

die() { echo "pgbench-profile: $*" >&2; exit 1; }
usage() { echo "pgbench-profile: $*; see scripts/pgbench-profile.sh --help" >&2; exit 2; }

default_clients() {
    local n c list=""
    n=$(nproc)
    for ((c = 1; c <= n; c *= 2)); do list+="${list:+,}$c"; done
    [[ ,$list, == *,$n,* ]] || list+=",$n"
    echo "$list"
}

clients=$(default_clients)
modes=select-only,tpcb-like
duration=10s
scale=10
out="./pgbench-profile-$(date +%Y%m%d-%H%M%S)"
lockprof="$root/build/lockprof"
sample_event=cycles

while (($#)); do
    case $1 in
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        --clients | --modes | --duration | --scale | --out | --lockprof | --sample-event)
            (($# >= 2)) || usage "$1 needs a value"
            case $1 in
                --clients) clients=$2 ;;
                --modes) modes=$2 ;;
                --duration) duration=$2 ;;
                --scale) scale=$2 ;;
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
    usage "--clients '$clients' is not a list of positive numbers like 1,4,16"
IFS=, read -r -a client_list <<<"$clients"
IFS=, read -r -a mode_list <<<"$modes"
((${#mode_list[@]})) || usage "--modes is empty; use select-only, tpcb-like or both"
for m in "${mode_list[@]}"; do
    [[ $m == select-only || $m == tpcb-like ]] ||
        usage "--modes '$m' is unknown; use select-only, tpcb-like or both"
done
case $duration in
    *[!0-9smh]* | "" | [smh]*) usage "--duration '$duration' is not a time like 10s, 90 or 2m" ;;
    *m) seconds=$((${duration%m} * 60)) ;;
    *h) seconds=$((${duration%h} * 3600)) ;;
    *s) seconds=${duration%s} ;;
    *) seconds=$duration ;;
esac
[[ $seconds =~ ^[0-9]+$ ]] || usage "--duration '$duration' is not a time like 10s, 90 or 2m"
((seconds >= 3)) || usage "--duration '$duration' is too short; lockprof needs at least 3s runs"
[[ $scale =~ ^[1-9][0-9]*$ ]] || usage "--scale '$scale' is not a positive number"

[[ -x $lockprof ]] ||
    die "no lockprof at '$lockprof'; build it (scripts/build.sh) or pass --lockprof PATH"
"$lockprof" record --help >/dev/null 2>&1 ||
    die "'$lockprof' has no working record command; rebuild it from a current checkout"
bin=$(bash "$cluster_script" bin 2>&1) || die "${bin#pg-cluster: }"
pgbench="$bin/pgbench"
[[ -x $pgbench ]] || die "no pgbench in $bin; install it (Debian: apt-get install postgresql-client)"
if ! command -v jq >/dev/null; then
    ((EUID == 0)) || die "jq is missing and needed to read lockprof's JSON; apt-get install jq"
    echo "pgbench-profile: installing jq (apt-get)" >&2
    { apt-get install -y -q jq || { apt-get update -q && apt-get install -y -q jq; }; } \
        >/dev/null 2>&1 || die "apt-get install jq failed; install jq and run again"
fi

mkdir -p "$out" || die "cannot create '$out'"
out=$(cd "$out" && pwd)
# The server runs as user postgres when we are root; it must reach the cluster folder, whose
# socket path must also stay short (sun_path).
cluster="$out/cluster"
if ((${#cluster} > 80)) || { ((EUID == 0)) && ! runuser -u postgres -- test -x "$out"; }; then
    cluster=$(mktemp -d "${TMPDIR:-/tmp}/pgbench-profile-cluster.XXXXXX")
    chmod 755 "$cluster"
    cluster="$cluster/c"
fi

pgbench_pid="" lockprof_pid="" sampled_event="" spin_pattern=""
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
    [[ $cluster == "$out/cluster" ]] || rmdir "$(dirname "$cluster")" 2>/dev/null || true
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(bash "$cluster_script" start-any "$cluster" 2>"$out/cluster-start.log") ||
    die "the PostgreSQL cluster did not start: $(tail -n 1 "$out/cluster-start.log")"
rm -f "$out/cluster-start.log"
connect=(-h 127.0.0.1 -p "$port" -U postgres)
echo "pgbench-profile: cluster on 127.0.0.1:$port ($cluster), pgbench -i -s $scale" >&2
"$pgbench" "${connect[@]}" -i -s "$scale" -q postgres >"$out/pgbench-init.log" 2>&1 ||
    die "pgbench -i failed: $(tail -n 1 "$out/pgbench-init.log") (log: $out/pgbench-init.log)"

threads_for() {  # pgbench -j: one thread per client, at most one per CPU
    local c=$1 n
    n=$(nproc)
    echo $((c < n ? c : n))
}

failed=0
rows=()
for mode in "${mode_list[@]}"; do
    for c in "${client_list[@]}"; do
        name="$mode-$c"
        script=()
        [[ $mode == select-only ]] && script=(-S)
        echo "pgbench-profile: $name: pgbench ${script[*]:+${script[*]} }-c $c -T $seconds, lockprof record" \
            "$((seconds - 2))s" >&2
        "$pgbench" "${connect[@]}" "${script[@]}" -c "$c" -j "$(threads_for "$c")" \
            -T "$seconds" postgres >"$out/$name.pgbench.log" 2>&1 &
        pgbench_pid=$!
        sleep 1  # clients connected, backends forked
        "$lockprof" record --match postgres --duration "$((seconds - 2))s" --sample \
            --sample-event "$sample_event" --folded "$out/$name.folded" \
            --flamegraph "$out/$name.svg" --output "$out/$name.json" \
            >"$out/$name.txt" 2>"$out/$name.lockprof.log" &
        lockprof_pid=$!
        pgbench_run_collect "$out/$name.pgbench.log"
        if ((pgbench_status)) || [[ -z $tps ]]; then
            echo "pgbench-profile: $name: pgbench failed: $(tail -n 1 "$out/$name.pgbench.log")" >&2
            tps="failed"
            failed=1
        else
            tps=$(printf '%.0f' "$tps")
        fi
        if ((lockprof_status)) || [[ ! -s $out/$name.json ]]; then
            echo "pgbench-profile: $name: lockprof record failed (status $lockprof_status):" \
                "$(tail -n 1 "$out/$name.lockprof.log")" >&2
            rows+=("| $mode | $c | $tps | lockprof failed | see $name.lockprof.log |")
            failed=1
            continue
        fi
        rows+=("$(jq -r --arg mode "$mode" --arg c "$c" --arg tps "$tps" '
            def pct: (. // 0) * 1000 | round / 10 | tostring
                     | (if test("[.]") then . else . + ".0" end) + "%";
            (.hot_symbols[0] // null) as $top
            | "| \($mode) | \($c) | \($tps) | \(.spin_locks.share | pct) | "
              + (if $top then "`\($top.short_name)` (\($top.module // "?" | sub(".*/"; "")),"
                 + " \($top.share | pct))" else "no samples" end)
              + " |"' "$out/$name.json")")
        sampled_event=$(jq -r '.sampling.event // "none"' "$out/$name.json")
        spin_pattern=$(jq -r '.spin_locks.pattern // ""' "$out/$name.json")
    done
done

{
    echo "# pgbench profile, $(date '+%Y-%m-%d %H:%M')"
    echo
    echo "- machine: $(uname -m), $(nproc) CPUs," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
        "kernel $(uname -r)"
    echo "- PostgreSQL: $("$bin/postgres" --version), throwaway cluster, default settings"
    echo "- pgbench: scale $scale, $seconds s per run, -j = min(clients, CPUs);" \
        "select-only = -S, tpcb-like = default script; tps is pgbench's whole run, lockprof" \
        "attached for most of it (its cost: bench/bench-attach.sh)"
    echo "- lockprof: \`record --match postgres --sample --sample-event $sample_event\`" \
        "(sampled: ${sampled_event:-none}), $((seconds - 2)) s per run from 1 s after pgbench" \
        "started"
    echo "- spin-lock share: samples in symbols matching \`${spin_pattern:-?}\`;" \
        "details per run in MODE-CLIENTS.txt, flamegraphs in MODE-CLIENTS.svg"
    echo
    echo "| mode | clients | tps | spin-lock share | top symbol (share of samples) |"
    echo "|---|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
} >"$out/summary.md"
cat "$out/summary.md"
echo "pgbench-profile: results in $out" >&2
exit "$failed"
