#!/usr/bin/env bash
# lockprof against ARM's lockhammer (ARM-software/synchronization-benchmarks,
# benchmarks/lockhammer), side by side in one run: each lock both tools have, the same thread
# counts and the same pinning (lockhammer's -t N pins thread i to the i-th CPU of the affinity
# mask; lockprof's --pin compact does the same), lockhammer's default shape (no shared data:
# lockprof --shared-lines 0; no work: -c 0in -p 0in, a count of zero instructions, which is
# lockprof's 0 ns: lockhammer's `0ns` still times its work loop, about 8 ns a call on the 2-core
# VM; 0.5 s per measurement). The two tools alternate,
# ROUNDS times, and the median of each side's rounds is compared: lockprof / lockhammer
# acquires per second. Not a test; prints numbers.
# Usage: bench/vs-lockhammer.sh LOCKHAMMER_BUILD_DIR [LOCKPROF_BUILD_DIR]   (default: build)
#   LOCKHAMMER_BUILD_DIR: the folder lockhammer's make wrote its lh_* binaries to, e.g.
#   benchmarks/lockhammer/build.relax_pause (make NO_JSON=1 builds without libjansson).
# Environment: THREADS (default 2, comma-separated), ROUNDS (default 3), DURATION_S (0.5),
#   SCHED=fifo (both tools' threads under SCHED_FIFO: lockprof --sched fifo, lockhammer -S FIFO;
#   needs root; less of the VM's scheduling noise), LOCKS (comma-separated lockprof names: only
#   these pairs; default all).
set -euo pipefail
usage="usage: bench/vs-lockhammer.sh LOCKHAMMER_BUILD_DIR [LOCKPROF_BUILD_DIR]"
[[ $# -ge 1 && $# -le 2 ]] || { echo "$usage" >&2; exit 2; }
lh_dir=$1
lockprof=${2:-build}/lockprof
threads_list=${THREADS:-2}
rounds=${ROUNDS:-3}
duration_s=${DURATION_S:-0.5}
sched=${SCHED:-other}
case $sched in
  other) lp_sched=(); lh_sched=() ;;
  fifo) lp_sched=(--sched fifo --force); lh_sched=(-S FIFO) ;;
  *) echo "vs-lockhammer: SCHED=$sched: other or fifo" >&2; exit 2 ;;
esac
[[ -x $lockprof ]] || {
  echo "vs-lockhammer: $lockprof missing; build it (ninja -C ${2:-build} lockprof) or name the build folder as the second argument" >&2
  exit 2
}
[[ -d $lh_dir ]] || {
  echo "vs-lockhammer: $lh_dir is not a folder; pass lockhammer's build folder (cd benchmarks/lockhammer && make NO_JSON=1 writes build.relax_pause/ or similar)" >&2
  exit 2
}
# lockprof's lock and the lockhammer test that runs the same algorithm, then any lockprof
# options that make it do the same work: swap_mutex retries its exchange with no delay step
# (lockprof's tas pauses by default, --delay=none does not); the other spinning tests use
# lockhammer's cpu_relax, PAUSE in build.relax_pause, as lockprof's default delay. The mix: cas_rw_lock only ever takes its lock shared;
# tbb_spin_rw_mutex makes every 64th acquire of a thread a write (its -r 6 default: 2^6 - 1
# readers per writer), which lockprof draws at random in the same proportion.
pairs=(
  "empty lh_empty"
  "tas lh_swap_mutex --delay=none"
  "ticket lh_ticket_spinlock"
  "clh lh_clh_spinlock"
  "qspinlock lh_queued_spinlock"
  "osq lh_osq_lock"
  "event-mutex lh_event_mutex"
  "pthread-mutex lh_pthread_mutex_lock"
  "pthread-trylock lh_pthread_mutex_trylock"
  "rw-cas lh_cas_rw_lock --read-fraction=1"
  "spin-rw lh_tbb_spin_rw_mutex --read-fraction=0.984375"
  "lockref lh_cas_lockref"
  "refcount lh_incdec_refcount"
)
found=0
for pair in "${pairs[@]}"; do
  read -r _ lh _ <<<"$pair"
  [[ -x $lh_dir/$lh ]] && found=1
done
[[ $found == 1 ]] || {
  echo "vs-lockhammer: $lh_dir holds none of lockhammer's binaries (lh_swap_mutex, lh_ticket_spinlock, ...); build lockhammer there first (make NO_JSON=1 in benchmarks/lockhammer)" >&2
  exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

lockprof_rate() {  # lock threads [options] -> acquires/s of one 1-trial run
  "$lockprof" --lock="$1" --threads="$2" "${@:3}" --pin=compact --shared-lines 0 --critical-ns 0 \
    --parallel-ns 0 --duration "${duration_s}s" --trials 1 --no-counters --quiet "${lp_sched[@]}" \
    --output "$work/r.json" >/dev/null
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["cells"][0]["summary"]["acquires_per_second"]["median"])' "$work/r.json"
}

lockhammer_rate() {  # binary threads -> locks/wall_sec, the last column of its summary row
  "$lh_dir/$1" -t "$2" -c 0in -p 0in -D "$duration_s" -Y "${lh_sched[@]}" >"$work/lh.out" 2>&1 || {
    echo "vs-lockhammer: $1 -t $2 failed:" >&2; tail -3 "$work/lh.out" >&2; return 1; }
  awk -F'|' '$1 ~ /^[0-9]/ && NF >= 4 {v = $NF} END {gsub(/ /, "", v); print v}' "$work/lh.out"
}

echo "vs-lockhammer: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), lockprof $("$lockprof" --version | head -1 | cut -d' ' -f2-)"
echo "shape: --pin compact / -t N, no shared data, no critical or parallel work (-c 0in -p 0in), ${duration_s} s, sched $sched, median of $rounds alternating rounds"
printf '%-16s %-26s %7s %14s %14s %8s\n' lock lockhammer threads lockprof/s lockhammer/s ratio
for threads in ${threads_list//,/ }; do
  for pair in "${pairs[@]}"; do
    read -r lock lh options <<<"$pair"
    [[ -z ${LOCKS:-} || ",$LOCKS," == *",$lock,"* ]] || continue
    if [[ ! -x $lh_dir/$lh ]]; then
      printf '%-16s %-26s %7s %s\n' "$lock" "$lh" "$threads" "(no $lh in $lh_dir: skipped)"
      continue
    fi
    : >"$work/lp" ; : >"$work/lhr"
    for ((r = 0; r < rounds; r++)); do
      # shellcheck disable=SC2086  # options: words, as written in the table
      lockprof_rate "$lock" "$threads" $options >>"$work/lp"
      lockhammer_rate "$lh" "$threads" >>"$work/lhr"
    done
    lp=$(median <"$work/lp") lhv=$(median <"$work/lhr")
    printf '%-16s %-26s %7s %14.0f %14.0f %8.3f\n' "$lock" "$lh" "$threads" "$lp" "$lhv" \
      "$(echo "$lp / $lhv" | bc -l)"
  done
done
