#!/usr/bin/env bash
# Validates lockprof's hardware paths on a real machine (an ARM server, or x86 bare metal) and
# checks the mechanism the 2020 PostgreSQL thread argued about (TAS's ldxr/stxr loop storing
# while the lock is held; CAS leaving before its stxr; LSE atomics having no store-exclusive),
# then packs everything into one bundle to attach to a mailing-list post. docs/validate.md.
#
# Needs bash and busybox-level tools only (awk, sed, grep, sort, tar, gzip, date, uname), so it
# also runs in a minimal emulated arm64 guest (scripts/test-arm-system.sh). `--help` teaches it.
set -uo pipefail

# --- Verdict thresholds -----------------------------------------------------------------------
# All per acquire, from the medians lockprof writes to the CSV (event_<alias>_per_acquire).
#
# Sanity gate: an LL/SC acquire executes at least one store-exclusive, so uncontended
# (1 thread) tas@llsc must count about 1 per acquire. Well under 1 means the counter does not
# count store-exclusives (QEMU's PMU counts 0 for these events; some cores do not implement
# them); far over 1 means it counts something else. Either way no check below can be trusted.
GATE_MIN_STORE_EXCLUSIVES=0.9
GATE_MAX_STORE_EXCLUSIVES=2.0
# Check a needs contention: tas must have found the lock held, i.e. retried its exchange,
# at least this often per acquire at the largest thread count (lockprof's rmw_per_acquire,
# counted in software). Below it the claim predicts no growth, so there is nothing to test.
CONTENTION_MIN_ATTEMPTS=1.5
# Check a: each tas try is an ldaxr/stxr pair that stores even when the lock is held, so at
# CONTENTION_MIN_ATTEMPTS tries per acquire the claim predicts at least that growth in
# store-exclusives per acquire from 1 thread to the largest count.
TAS_GROWTH_MIN=1.5
# Check a: cas branches out before its stxr when the lock is held; it stores only when it saw
# the lock free (plus a retry when that store-exclusive fails), so it stays near 1. Allow 50%.
CAS_NEAR_ONE_MAX=1.5
# Check b: "exceeds" means by a margin both relative and absolute, so that 0.002 vs 0.001
# failed store-exclusives per acquire (noise on an idle monitor) does not confirm anything.
FAIL_RATIO_MIN=1.5
FAIL_ABS_MIN=0.05
# Check c: an LSE acquire (swpa/casa) is one instruction with no store-exclusive; allow a
# little for anything else in the process that uses exclusives (libc, the kernel's user
# helpers), but far below one per acquire.
LSE_MAX_STORE_EXCLUSIVES=0.05

# --- Defaults ---------------------------------------------------------------------------------
FULL_DURATION=500ms   # per trial in the sweep
FULL_SAMPLE_DURATION=500ms
QUICK_DURATION=50ms
QUICK_SAMPLE_DURATION=200ms # 3 trials x 200 ms at 1000 Hz: ~600 samples, enough to annotate
DEFAULT_TRIALS=3

me=validate-hardware
script_dir="$(cd "$(dirname "$0")" && pwd)"

usage() {
    cat <<'EOF'
Usage: scripts/validate-hardware.sh [options]
       scripts/validate-hardware.sh --check DIR [DIR...]

Validates lockprof on this machine and checks the mechanism of the 2020 PostgreSQL thread on
ARM spinlocks, then writes everything into one folder and one DIR.tar.gz to attach to a post.
Meant for a real ARM server (Graviton, Kunpeng, Ampere, Neoverse) or x86 bare metal.

What it runs, in order (every output lands in the folder):
  1. lockprof doctor, events, list-locks, --version, and the acquire code of tas and cas
     (list-locks --disasm) in every flavour this binary has
  2. the TAS/TTAS/CAS sweep: on aarch64 tas, ttas, cas @llsc, @lse (only when the CPU has
     LSE atomics), @outline and bare; on x86 the bare names. Threads 1,2,4,... up to the CPU
     count, 3 trials per cell, counting cycles, instructions, stxr_fail, stxr_pass, strex,
     ldrex and l1d_misses per acquire on aarch64 (cycles, instructions, cache_misses on x86)
     -> sweep.json, sweep.csv, sweep.log
  3. a sampled run of tas vs cas (on @llsc; x86: bare) at 1 thread and the largest count, with
     annotated disassembly and an HTML report -> sample.json, samples.json, report.html
  4. the mechanism checks, each printed as one line: confirmed, refuted, or
     `not measurable here (why)`, with the numbers used (thresholds at the top of this script):
       a. on LL/SC, tas's store-exclusives per acquire grow with threads (it stores even while
          the lock is held) while cas's stay near 1 (it branches out before its stxr)
       b. on LL/SC, tas's failed store-exclusives (stxr_fail) per acquire exceed cas's under
          contention (2 or more threads)
       c. the LSE flavours execute no store-exclusives (swpa/casa are single instructions)
     A sanity gate comes first: uncontended tas@llsc must count about 1 store-exclusive per
     acquire, or the counters do not count what they claim (emulators such as QEMU count 0),
     and every check is `not measurable here` with that reason.
  5. summary.md (machine, kernel, lockprof provenance, throughput and per-acquire tables,
     verdicts: paste it into a mailing-list post) and DIR.tar.gz holding the whole folder

Options:
  --out DIR        output folder (default ./lockprof-validate-<host>-<date>); must be new or
                   empty. The bundle is DIR.tar.gz beside it
  --lockprof PATH  the lockprof binary (default: lockprof on PATH, else this repository's
                   build/lockprof)
  --quick          short trials (50 ms per trial, 200 ms sampled): a minute or less on most
                   machines; fine to check the setup, too short for numbers to publish
  --threads LIST   thread counts, e.g. 1,2,4,8 (default: powers of two up to the CPU count,
                   and the CPU count itself). 1 is always added: the sanity gate needs it
  --trials N       trials per cell (default 3); figures are medians with their spread
  --duration D     sweep trial length, e.g. 1s or 200ms (default 500ms; 50ms with --quick)
  --check DIR...   recompute the gate and the verdicts from DIR/sweep.csv (and DIR/machine.txt,
                   DIR/sweep.log when present) of an earlier run; runs nothing, writes nothing.
                   DIR may be the run's DIR.tar.gz (extracted into a temporary folder). With
                   several: one table of the gate and checks a, b, c, a row per host (machine.txt's
                   host, else the folder's name), then each host's lines prefixed by its name
  -h, --help       this help

Permissions: hardware counters need perf_event. As a user, kernel.perf_event_paranoid must
be 2 or lower (user-space counting of your own processes, which is all this needs); as root no
limit applies. `lockprof doctor` (step 1) says what stands in the way. In a VM the hypervisor
must expose a virtual PMU, and even then it may not count store-exclusives: the gate says so.

Exit status: 0 when everything ran, whatever the verdicts (refuted is a result); 1 when a
lockprof step failed (the message names the step and its log); 2 bad usage; 130 interrupted
(Ctrl-C; 143 for SIGTERM): completed steps are kept, the step in progress is removed, and no
summary or bundle is written.

Examples:
  scripts/validate-hardware.sh --quick                       check the setup first
  scripts/validate-hardware.sh                               the real run (a few minutes)
  scripts/validate-hardware.sh --threads 1,2,4,8,16,32,64 --out graviton3
  scripts/validate-hardware.sh --check lockprof-validate-myhost-20260101-120000
  scripts/validate-hardware.sh --check graviton3.tar.gz kunpeng920  one table, a row per host
EOF
}

usage_error() {
    echo "$me: $*; see --help" >&2
    exit 2
}

# --- Options ----------------------------------------------------------------------------------
out=""
lockprof=""
quick=0
threads_arg=""
trials=$DEFAULT_TRIALS
duration=""
check_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
    -h | --help)
        usage
        exit 0
        ;;
    --quick) quick=1 ;;
    --check | --check=*)
        # --check DIR [DIR...]: the folders (or bundles) up to the next option.
        if [[ $1 == --check ]]; then
            [[ $# -ge 2 && -n $2 ]] || usage_error "--check needs a value"
            shift
        else
            set -- "${1#*=}" "${@:2}"
            [[ -n $1 ]] || usage_error "--check needs a value"
        fi
        check_args+=("$1")
        while [[ $# -ge 2 && -n $2 && $2 != -* ]]; do
            check_args+=("$2")
            shift
        done
        ;;
    --out | --lockprof | --threads | --trials | --duration)
        [[ $# -ge 2 && -n $2 ]] || usage_error "$1 needs a value"
        case $1 in
        --out) out=$2 ;;
        --lockprof) lockprof=$2 ;;
        --threads) threads_arg=$2 ;;
        --trials) trials=$2 ;;
        --duration) duration=$2 ;;
        esac
        shift
        ;;
    --out=* | --lockprof=* | --threads=* | --trials=* | --duration=*)
        value=${1#*=}
        [[ -n $value ]] || usage_error "${1%%=*} needs a value"
        case $1 in
        --out=*) out=$value ;;
        --lockprof=*) lockprof=$value ;;
        --threads=*) threads_arg=$value ;;
        --trials=*) trials=$value ;;
        --duration=*) duration=$value ;;
        esac
        ;;
    *) usage_error "unknown argument '$1'" ;;
    esac
    shift
done

[[ $trials =~ ^[1-9][0-9]*$ ]] || usage_error "--trials '$trials' is not a positive whole number"
if [[ -n $duration && ! $duration =~ ^[0-9]+(\.[0-9]+)?(s|ms|us)$ ]]; then
    usage_error "--duration '$duration' is not a duration such as 1s, 200ms or 500us"
fi
if [[ -n $threads_arg && ! $threads_arg =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
    usage_error "--threads '$threads_arg' is not a comma-separated list of thread counts such as 1,2,4,8"
fi

# --- CSV analysis (awk; shared by a run and --check) ------------------------------------------
# Loads a lockprof CSV by column name. Cells with no finished trial (an interrupted run) are
# skipped. Event values stay strings: "" is "not counted", which is not 0.
# shellcheck disable=SC2016 # awk programs: the $ are awk's
AWK_LOAD='
function num(v) { return v + 0 }
function get(name) { return (name in col) ? $(col[name]) : "" }
function f2(v) { return sprintf("%.2f", v) }
function f3(v) { return sprintf("%.3f", v) }
function nice(v,   a) {
    if (v == "") return "n/c"
    v += 0; a = v < 0 ? -v : v
    if (a == 0) return "0"
    if (a >= 1000) return sprintf("%.0f", v)
    if (a >= 100) return sprintf("%.1f", v)
    if (a >= 1) return sprintf("%.2f", v)
    if (a >= 0.01) return sprintf("%.3f", v)
    return sprintf("%.1e", v)
}
function add_thread(t,   i, j) {
    if (t in seen_t) return
    seen_t[t] = 1
    nt++
    for (i = nt; i > 1 && tlist[i - 1] > t; i--) tlist[i] = tlist[i - 1]
    tlist[i] = t
}
BEGIN { FS = ","; nl = 0; nt = 0; ne = 0 }
NR == 1 {
    for (i = 1; i <= NF; i++) {
        col[$i] = i
        if ($i ~ /^event_.*_per_acquire$/) {
            e = $i; sub(/^event_/, "", e); sub(/_per_acquire$/, "", e)
            ne++; elist[ne] = e
        }
    }
    next
}
{
    if (num(get("trials")) < 1) next
    lock = get("lock"); t = num(get("threads"))
    if (!(lock in seen_lock)) { seen_lock[lock] = 1; nl++; llist[nl] = lock }
    add_thread(t)
    k = lock SUBSEP t
    have[k] = 1
    delay[lock] = get("delay")
    aps[k] = num(get("acquires_per_second"))
    apsmin[k] = num(get("acquires_per_second_min"))
    apsmax[k] = num(get("acquires_per_second_max"))
    rmw[k] = get("rmw_per_acquire")
    spins[k] = get("spins_per_acquire")
    lost[k] = num(get("lost_updates"))
    for (i = 1; i <= ne; i++) ev[k, elist[i]] = get("event_" elist[i] "_per_acquire")
}
function event(lock, t, name,   k) {
    k = lock SUBSEP t
    if (!(k in have)) return ""
    return ((k SUBSEP name) in ev) ? ev[k, name] : ""
}
# Store-exclusives per acquire from one source: "strex", or "passfail" (stxr_pass + stxr_fail).
function se(lock, t, source,   p, f) {
    if (source == "strex") return event(lock, t, "strex")
    p = event(lock, t, "stxr_pass"); f = event(lock, t, "stxr_fail")
    if (p == "" || f == "") return ""
    return p + f
}
function source_name(source) { return source == "strex" ? "strex" : "stxr_pass + stxr_fail" }
'

# Prints the gate line and one line per check. Reads ARCH, CPUS, LSE and NOT_COUNTED_REASON
# from the environment (ENVIRON: no escape processing), the thresholds likewise.
# shellcheck disable=SC2016
AWK_VERDICTS='
function nm(letter, why) { printf "check %s: not measurable here (%s)\n", letter, why }
function series(lock, source, kind,   i, t, v, s) {
    s = ""
    for (i = 1; i <= nt; i++) {
        t = tlist[i]
        if (kind == "se") v = se(lock, t, source)
        else if (kind == "rmw") v = ((lock SUBSEP t) in have) ? rmw[lock, t] : ""
        else v = event(lock, t, kind)
        if (v == "") continue
        s = s (s == "" ? "" : "/") (kind == "stxr_fail" ? f3(v) : f2(v))
    }
    return s
}
function tseries(   i, s) {
    s = ""
    for (i = 1; i <= nt; i++) s = s (s == "" ? "" : "/") tlist[i]
    return s (nt == 1 && tlist[1] == 1 ? " thread" : " threads")
}
END {
    arch = ENVIRON["ARCH"]; cpus = ENVIRON["CPUS"] + 0; lse = ENVIRON["LSE"]
    why_nc = ENVIRON["NOT_COUNTED_REASON"]
    # Thresholds compare as numbers and print as written at the top of the script.
    gmin = ENVIRON["GATE_MIN_STORE_EXCLUSIVES"]; gmax = ENVIRON["GATE_MAX_STORE_EXCLUSIVES"]
    cmin = ENVIRON["CONTENTION_MIN_ATTEMPTS"] + 0; grow = ENVIRON["TAS_GROWTH_MIN"] + 0
    casmax = ENVIRON["CAS_NEAR_ONE_MAX"] + 0; fratio = ENVIRON["FAIL_RATIO_MIN"] + 0
    fabs = ENVIRON["FAIL_ABS_MIN"] + 0; lsemax = ENVIRON["LSE_MAX_STORE_EXCLUSIVES"] + 0
    TAS = "tas@llsc"; CAS = "cas@llsc"

    if (arch != "aarch64") {
        why = arch " has no LL/SC: its LOCK-prefixed atomics have no store-exclusive to count"
        if (arch == "") why = "unknown architecture: machine.txt names none and sweep.csv has no aarch64 flavours"
        printf "gate: not applicable (%s)\n", why
        nm("a", why); nm("b", why); nm("c", why)
        exit
    }

    # The gate: which store-exclusive source counts about one per uncontended tas@llsc acquire.
    gate_why = ""; source = ""
    if (!((TAS SUBSEP 1) in have)) {
        gate_why = "sweep.csv has no 1-thread tas@llsc cell to check the counters against"
    } else {
        tried = ""
        split("strex passfail", sources, " ")
        for (i = 1; i <= 2; i++) {
            v = se(TAS, 1, sources[i])
            if (v == "") continue
            tried = tried (tried == "" ? "" : " and ") f2(v) " (" source_name(sources[i]) ")"
            if (v + 0 >= gmin + 0 && v + 0 <= gmax + 0) { source = sources[i]; gate_value = v + 0; break }
            if (v + 0 > gmax + 0) over = 1
        }
        if (tried == "") {
            gate_why = "the store-exclusive events (strex, stxr_pass, stxr_fail) were not counted"
            if (why_nc != "") gate_why = gate_why ": " why_nc
        } else if (source == "") {
            if (over)
                gate_why = "the counters do not count what they claim: uncontended tas@llsc counted " tried " store-exclusives per acquire, more than " gmax " for one ldaxr/stxr pair: the event counts something else"
            else
                gate_why = "the counters do not count what they claim: uncontended tas@llsc counted " tried " store-exclusives per acquire, but an LL/SC acquire executes at least one (gate: " gmin "): an emulator such as QEMU counts 0 for these events, or the core does not implement them"
        }
    }
    if (gate_why != "") {
        printf "gate: failed -- %s\n", gate_why
        nm("a", gate_why); nm("b", gate_why); nm("c", gate_why)
        exit
    }
    printf "gate: passed -- uncontended tas@llsc executed %s store-exclusives per acquire (%s; expected %s to %s)\n", f2(gate_value), source_name(source), gmin, gmax

    # The largest thread count with both LL/SC locks measured.
    tmax = 0
    for (i = 1; i <= nt; i++)
        if (se(TAS, tlist[i], source) != "" && se(CAS, tlist[i], source) != "") tmax = tlist[i]
    tries = (TAS SUBSEP tmax) in have ? rmw[TAS, tmax] : ""
    contention_why = ""
    if (cpus < 2) contention_why = "growth with threads needs at least 2 CPUs; this machine has " cpus
    else if (tmax < 2) contention_why = "no tas@llsc and cas@llsc cells with 2 or more threads (threads " tseries() ")"
    else if (tries != "" && tries + 0 < cmin)
        contention_why = "too little contention: tas@llsc retried " f2(tries) " exchanges per acquire at " tmax " threads, and the claim predicts growth only from " cmin "; run with more threads"

    # a. tas stores on every try; cas stays near one store-exclusive per acquire.
    if (contention_why != "") nm("a", contention_why)
    else {
        t1 = se(TAS, 1, source) + 0; tn = se(TAS, tmax, source) + 0
        g = t1 > 0 ? tn / t1 : 0
        cworst = 0
        for (i = 1; i <= nt; i++) {
            v = se(CAS, tlist[i], source)
            if (v != "" && v + 0 > cworst) cworst = v + 0
        }
        ok_grow = g >= grow; ok_cas = cworst <= casmax
        verdict = ok_grow && ok_cas ? "confirmed" : "refuted"
        because = ""
        if (!ok_grow) because = "; tas@llsc did not grow enough"
        if (!ok_cas) because = because "; cas@llsc did not stay near 1"
        printf "check a: %s -- store-exclusives per acquire at %s: tas@llsc %s (x%s from 1 to %s threads, needs >= x%s; exchange attempts %s), cas@llsc %s (max %s, needs <= %s) [%s]%s\n", verdict, tseries(), series(TAS, source, "se"), f2(g), tmax, grow, series(TAS, "", "rmw"), series(CAS, source, "se"), f2(cworst), casmax, source_name(source), because
    }

    # b. tas fails more store-exclusives than cas under contention.
    anyfail = 0; counted = 0
    for (i = 1; i <= nt; i++) {
        split(TAS " " CAS, both, " ")
        for (j = 1; j <= 2; j++) {
            v = event(both[j], tlist[i], "stxr_fail")
            if (v != "") { counted = 1; if (v + 0 > 0) anyfail = 1 }
        }
    }
    tf = event(TAS, tmax, "stxr_fail"); cf = event(CAS, tmax, "stxr_fail")
    if (contention_why != "") nm("b", contention_why)
    else if (!counted || tf == "" || cf == "")
        nm("b", "stxr_fail was not counted" (why_nc != "" ? ": " why_nc : ""))
    else if (!anyfail)
        nm("b", "stxr_fail counted 0 in every tas@llsc and cas@llsc cell, the contended ones included: the core may not implement the failed-store-exclusive event (STREX_FAIL_SPEC, 0x6e)")
    else {
        tf += 0; cf += 0
        verdict = (tf >= fratio * cf && tf - cf >= fabs) ? "confirmed" : "refuted"
        printf "check b: %s -- stxr_fail per acquire at %s threads: tas@llsc %s, cas@llsc %s (needs tas >= %s x cas and tas - cas >= %s; at %s: tas %s, cas %s)\n", verdict, tmax, f3(tf), f3(cf), fratio, fabs, tseries(), series(TAS, "", "stxr_fail"), series(CAS, "", "stxr_fail")
    }

    # c. LSE flavours execute no store-exclusives.
    if (lse == "no") nm("c", "this CPU has no LSE atomics (no HWCAP_ATOMICS; list-locks marks @lse \"needs LSE: not on this CPU\"), so the @lse flavours were skipped")
    else if (lse == "absent") nm("c", "this lockprof binary has no @lse flavour")
    else {
        worst = -1; missing = 1; lines = ""
        split("tas@lse cas@lse", lse_locks, " ")
        for (j = 1; j <= 2; j++) {
            s = series(lse_locks[j], source, "se")
            if (s != "") missing = 0
            lines = lines (j > 1 ? ", " : "") lse_locks[j] " " (s == "" ? "n/c" : s)
            for (i = 1; i <= nt; i++) {
                v = se(lse_locks[j], tlist[i], source)
                if (v != "" && v + 0 > worst) worst = v + 0
            }
        }
        if (missing) nm("c", "sweep.csv has no counted tas@lse or cas@lse cell")
        else {
            verdict = worst <= lsemax ? "confirmed" : "refuted"
            printf "check c: %s -- store-exclusives per acquire at %s: %s (max %s, needs <= %s) [%s]\n", verdict, tseries(), lines, f3(worst), lsemax, source_name(source)
        }
    }
}
'

# Markdown tables for summary.md: throughput, cas/tas per flavour, events per acquire.
# shellcheck disable=SC2016
AWK_TABLES='
function spread(k) { return aps[k] > 0 ? sprintf("%.0f%%", (apsmax[k] - apsmin[k]) / 2 / aps[k] * 100) : "-" }
END {
    print "### Throughput (millions of acquires/s; median of the trials, +- half their min-max range)"
    print ""
    h = "| lock | delay |"; r = "|---|---|"
    for (i = 1; i <= nt; i++) { h = h " " tlist[i] " thread" (tlist[i] == 1 ? "" : "s") " |"; r = r "---:|" }
    print h; print r
    for (l = 1; l <= nl; l++) {
        lock = llist[l]; row = "| " lock " | " delay[lock] " |"
        for (i = 1; i <= nt; i++) {
            k = lock SUBSEP tlist[i]
            row = row " " ((k in have) ? nice(aps[k] / 1e6) " +-" spread(k) (lost[k] ? " EXCLUSION FAILED" : "") : "-") " |"
        }
        print row
    }
    print ""
    print "### cas vs tas (cas acquires/s / tas acquires/s, per flavour; \"~\" = trial ranges overlap, within noise)"
    print ""
    print "| flavour | delay |" substr(h, length("| lock | delay |") + 1); print r
    split("llsc lse outline -", fl, " ")
    for (f = 1; f <= 4; f++) {
        suffix = fl[f] == "-" ? "" : "@" fl[f]
        tas = "tas" suffix; cas = "cas" suffix
        if (!(tas in seen_lock) || !(cas in seen_lock)) continue
        row = "| " (suffix == "" ? "(bare)" : suffix) " | " delay[cas] " |"
        for (i = 1; i <= nt; i++) {
            kt = tas SUBSEP tlist[i]; kc = cas SUBSEP tlist[i]
            if (!(kt in have) || !(kc in have) || aps[kt] <= 0) { row = row " - |"; continue }
            overlap = !(apsmin[kc] > apsmax[kt] || apsmax[kc] < apsmin[kt])
            row = row " " sprintf("%.2fx", aps[kc] / aps[kt]) (overlap ? " ~" : "") " |"
        }
        print row
    }
    print ""
    print "### Per acquire (medians; n/c = not counted; rmw = atomic read-modify-write attempts, spins = polls of a held lock)"
    print ""
    h = "| lock | threads | rmw | spins |"; r = "|---|---:|---:|---:|"
    for (e = 1; e <= ne; e++) { h = h " " elist[e] " |"; r = r "---:|" }
    print h; print r
    for (l = 1; l <= nl; l++)
        for (i = 1; i <= nt; i++) {
            k = llist[l] SUBSEP tlist[i]
            if (!(k in have)) continue
            row = "| " llist[l] " | " tlist[i] " | " nice(rmw[k]) " | " nice(spins[k]) " |"
            for (e = 1; e <= ne; e++) row = row " " nice(ev[k, elist[e]]) " |"
            print row
        }
    if (ne == 0) { print ""; print "No event was counted (see the notes below)." }
}
'

# The value of KEY from a key=value file.
kv() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n 1; }

# Why lockprof could not count the store-exclusive events, from its warning in a log:
# "lockprof: warning: a, b: not counted: REASON; run ..." -> REASON.
not_counted_reason() {
    [[ -f $1 ]] || return 0
    awk '/lockprof: warning:/ && /not counted: / && (/strex/ || /stxr_/) {
        r = substr($0, index($0, "not counted: ") + 13)
        j = index(r, "; run "); if (j) r = substr(r, 1, j - 1)
        print r; exit }' "$1"
}

# Prints the gate and the verdicts for folder $1 (sweep.csv, machine.txt, sweep.log).
verdicts_for() {
    local dir=$1 csv=$1/sweep.csv machine=$1/machine.txt arch cpus lse
    arch=$(kv "$machine" arch)
    cpus=$(kv "$machine" cpus)
    lse=$(kv "$machine" lse)
    # Without machine.txt (a CSV from elsewhere): the flavours say the architecture, and the
    # sweep never goes past the CPU count, so its largest thread count stands in for it.
    if [[ -z $arch ]]; then
        if awk -F, 'NR > 1 && $3 ~ /^(llsc|lse|outline)$/ { found = 1 } END { exit !found }' "$csv"; then
            arch=aarch64
        fi
    fi
    if [[ -z $cpus ]]; then
        cpus=$(awk -F, 'NR > 1 && $5 + 0 > m { m = $5 + 0 } END { print m + 0 }' "$csv")
    fi
    if [[ -z $lse ]]; then
        if grep -q '^tas@lse,' "$csv"; then lse=yes; else lse=absent; fi
    fi
    ARCH=$arch CPUS=$cpus LSE=$lse NOT_COUNTED_REASON="$(not_counted_reason "$dir/sweep.log")" \
        GATE_MIN_STORE_EXCLUSIVES=$GATE_MIN_STORE_EXCLUSIVES \
        GATE_MAX_STORE_EXCLUSIVES=$GATE_MAX_STORE_EXCLUSIVES \
        CONTENTION_MIN_ATTEMPTS=$CONTENTION_MIN_ATTEMPTS TAS_GROWTH_MIN=$TAS_GROWTH_MIN \
        CAS_NEAR_ONE_MAX=$CAS_NEAR_ONE_MAX FAIL_RATIO_MIN=$FAIL_RATIO_MIN FAIL_ABS_MIN=$FAIL_ABS_MIN \
        LSE_MAX_STORE_EXCLUSIVES=$LSE_MAX_STORE_EXCLUSIVES \
        awk "$AWK_LOAD$AWK_VERDICTS" "$csv"
}

# --- --check DIR...: verdicts only ------------------------------------------------------------
# Each argument is a run's folder, or the DIR.tar.gz it wrote beside it (extracted into a
# temporary folder, removed on exit). All are checked before anything is printed, so a bad one
# among several is one usage error, not half a table.
check_tmp=""
check_folders=() # the folder holding each one's sweep.csv
check_csvs=()    # how messages name that sweep.csv
check_names=()   # the host name when machine.txt has none: the folder's
resolve_check() {
    local arg=${1%/} dir rel d found=()
    if [[ -f $arg && ($arg == *.tar.gz || $arg == *.tgz) ]]; then
        if [[ -z $check_tmp ]]; then
            check_tmp=$(mktemp -d "${TMPDIR:-/tmp}/validate-hardware.XXXXXX" 2>/dev/null) || {
                echo "$me: cannot create a temporary folder to extract $arg into (mktemp -d failed); set TMPDIR to a writable folder" >&2
                exit 1
            }
            trap 'rm -rf "$check_tmp"' EXIT
        fi
        dir="$check_tmp/${#check_folders[@]}"
        { mkdir "$dir" && tar -xzf "$arg" -C "$dir"; } 2>/dev/null ||
            usage_error "--check $arg: not a readable .tar.gz (tar -xzf failed); pass the DIR.tar.gz a run wrote, or its folder"
        # A run's bundle holds its folder, DIR/, with sweep.csv in it.
        for d in "$dir" "$dir"/*/; do
            d=${d%/}
            [[ -s $d/sweep.csv ]] && found+=("$d")
        done
        [[ ${#found[@]} -ge 1 ]] || usage_error "--check $arg: no sweep.csv in it (a run's DIR.tar.gz holds DIR/sweep.csv)"
        [[ ${#found[@]} -eq 1 ]] || usage_error "--check $arg: holds ${#found[@]} folders with a sweep.csv; extract it and pass them one by one"
        dir=${found[0]}
        rel=${dir#"$check_tmp/${#check_folders[@]}"}
        rel=${rel#/}
        check_csvs+=("${rel:+$rel/}sweep.csv in $arg")
        if [[ -n $rel ]]; then check_names+=("$rel"); else check_names+=("$(basename "${arg%.t*gz}")"); fi
    else
        [[ -d $arg ]] || usage_error "--check $arg: no such folder"
        [[ -s $arg/sweep.csv ]] || usage_error "--check $arg: no sweep.csv there (the folder of an earlier run holds one)"
        dir=$arg
        check_csvs+=("$arg/sweep.csv")
        check_names+=("$(basename "$(cd "$arg" && pwd)")")
    fi
    head -n 1 "$dir/sweep.csv" | grep -q '^lock,.*threads' ||
        usage_error "--check ${check_csvs[${#check_csvs[@]} - 1]}: not a lockprof CSV (its header starts with lock,...,threads)"
    check_folders+=("$dir")
}

# The verdict word(s) of line NAME ("gate", "check a") in the lines $2: passed, failed, not
# applicable; confirmed, refuted, not measurable here.
verdict_word() {
    printf '%s\n' "$2" | sed -n "s/^$1: //p" | sed 's/ -- .*//; s/ (.*//' | head -n 1
}

# The CPU of folder $1 for the table: its model (machine.txt's cpu, else doctor.txt's cpu line,
# else the architecture), its CPU count and, where machine.txt says, whether it has LSE.
cpu_cell() {
    local model cpus lse
    model=$(kv "$1/machine.txt" cpu)
    [[ -n $model ]] || model=$(sed -n 's/^cpu  *//p' "$1/doctor.txt" 2>/dev/null | head -n 1)
    model=${model% \(*} # doctor's "MODEL (ARCH, N logical CPUs)"
    [[ -n $model ]] || model=$(kv "$1/machine.txt" arch)
    [[ -n $model ]] || model=unknown
    cpus=$(kv "$1/machine.txt" cpus)
    lse=$(kv "$1/machine.txt" lse)
    printf '%s' "$model"
    [[ -n $cpus ]] && printf ', %s CPU%s' "$cpus" "$([[ $cpus == 1 ]] || echo s)"
    [[ $lse == yes || $lse == no ]] && printf ', LSE %s' "$lse"
    echo
}

# Several runs: one table, a row per host, then each host's lines as one run prints them.
check_several() {
    local n=${#check_folders[@]} i j nth same host csvs="" virt line
    local hosts=() labels=() verdicts=()
    for ((i = 0; i < n; i++)); do
        host=$(kv "${check_folders[i]}/machine.txt" host)
        [[ -n $host ]] || host=${check_names[i]}
        hosts+=("${host//|//}")
        csvs="$csvs${csvs:+, }${check_csvs[i]}"
        verdicts+=("$(verdicts_for "${check_folders[i]}")")
    done
    # The same host more than once (two runs on one machine): #1, #2 in the order given.
    for ((i = 0; i < n; i++)); do
        nth=0
        same=0
        for ((j = 0; j < n; j++)); do
            [[ ${hosts[j]} == "${hosts[i]}" ]] || continue
            same=$((same + 1))
            [[ $j -le $i ]] && nth=$((nth + 1))
        done
        if [[ $same -gt 1 ]]; then labels+=("${hosts[i]}#$nth"); else labels+=("${hosts[i]}"); fi
    done
    echo "$me: verdicts recomputed from $n runs: $csvs"
    echo
    {
        printf 'host\tcpu\tgate\tcheck a\tcheck b\tcheck c\n'
        for ((i = 0; i < n; i++)); do
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${labels[i]}" "$(cpu_cell "${check_folders[i]}" | tr '|' '/')" \
                "$(verdict_word gate "${verdicts[i]}")" "$(verdict_word 'check a' "${verdicts[i]}")" \
                "$(verdict_word 'check b' "${verdicts[i]}")" "$(verdict_word 'check c' "${verdicts[i]}")"
        done
    } | awk -F '\t' '
        { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } nf = NF }
        END {
            for (r = 1; r <= NR; r++) {
                row = "|"
                for (i = 1; i <= nf; i++) row = row " " sprintf("%-" w[i] "s", cell[r, i]) " |"
                print row
                if (r > 1) continue
                row = "|"
                for (i = 1; i <= nf; i++) { d = ""; for (k = 0; k < w[i] + 2; k++) d = d "-"; row = row d "|" }
                print row
            }
        }'
    for ((i = 0; i < n; i++)); do
        echo
        while IFS= read -r line; do printf '%s: %s\n' "${labels[i]}" "$line"; done <<<"${verdicts[i]}"
        virt=$(kv "${check_folders[i]}/machine.txt" virtualisation)
        if [[ -n $virt && $virt != "none detected" ]]; then
            printf '%s: note: measured under virtualisation or emulation: %s\n' "${labels[i]}" "$virt"
        fi
    done
}

if [[ ${#check_args[@]} -gt 0 ]]; then
    for arg in "${check_args[@]}"; do resolve_check "$arg"; done
    if [[ ${#check_folders[@]} -gt 1 ]]; then
        check_several
        exit 0
    fi
    echo "$me: verdicts recomputed from ${check_csvs[0]}"
    verdicts_for "${check_folders[0]}"
    virt=$(kv "${check_folders[0]}/machine.txt" virtualisation)
    [[ -n $virt && $virt != "none detected" ]] && echo "note: measured under virtualisation or emulation: $virt"
    exit 0
fi

# --- A run ------------------------------------------------------------------------------------
if [[ -z $lockprof ]]; then
    if command -v lockprof >/dev/null 2>&1; then
        lockprof=$(command -v lockprof)
    elif [[ -x $script_dir/../build/lockprof ]]; then
        lockprof="$(cd "$script_dir/../build" && pwd)/lockprof"
    else
        usage_error "no lockprof on PATH and no $script_dir/../build/lockprof: build it (scripts/build.sh) or pass --lockprof PATH"
    fi
fi
[[ -f $lockprof && -x $lockprof ]] || usage_error "--lockprof $lockprof: not an executable file"
case $lockprof in /*) ;; *) lockprof="$(cd "$(dirname "$lockprof")" && pwd)/$(basename "$lockprof")" ;; esac

host=$(uname -n 2>/dev/null | sed 's/[^A-Za-z0-9._-]/_/g')
[[ -n $host ]] || host=unknown
[[ -n $out ]] || out="./lockprof-validate-$host-$(date +%Y%m%d-%H%M%S)"
out=${out%/}
[[ -n $out ]] || usage_error "--out /: choose a folder of its own"
if [[ -e $out && ! -d $out ]]; then usage_error "--out $out exists and is not a folder"; fi
if [[ -d $out ]] && [[ -n $(ls -A "$out" 2>/dev/null) ]]; then
    usage_error "--out $out exists and is not empty: choose a new folder so results do not mix"
fi
mkdir -p "$out" || { echo "$me: cannot create $out" >&2; exit 1; }
out="$(cd "$out" && pwd)"
[[ $out != / ]] || usage_error "--out /: choose a folder of its own"
bundle="$out.tar.gz"
[[ ! -e $bundle ]] || usage_error "$bundle already exists: move it away or choose another --out"

# --- Interruption: keep what finished, remove what did not ------------------------------------
child=""
step_name=""
step_files=()
done_steps=()
tmp_files=()
# shellcheck disable=SC2317 # called from the traps
on_signal() {
    local sig=$1 i
    trap - INT TERM
    if [[ -n $child ]]; then
        # Ctrl-C reaches lockprof too (same process group); give it a moment to stop on its own
        # before telling it, then insist.
        for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$child" 2>/dev/null || break; sleep 0.2; done
        kill -INT "$child" 2>/dev/null
        for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25; do
            kill -0 "$child" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL "$child" 2>/dev/null
        wait "$child" 2>/dev/null
    fi
    local removed=""
    for i in "${step_files[@]}" "${tmp_files[@]}"; do
        [[ -e $i ]] && { rm -f "$i"; removed="$removed ${i##*/}"; }
    done
    echo >&2
    echo "$me: interrupted (SIG$sig)${step_name:+ during the $step_name step}; removed its partial outputs:${removed:- none}" >&2
    local unwritten="no summary or bundle was written"
    [[ -s $out/summary.md ]] && unwritten="summary.md was written, the bundle was not"
    if [[ ${#done_steps[@]} -gt 0 ]]; then
        echo "$me: kept $out with the completed steps: ${done_steps[*]}; $unwritten" >&2
    else
        echo "$me: no step had completed; $out holds nothing to keep" >&2
    fi
    [[ $sig == TERM ]] && exit 143
    exit 130
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM

progress() { echo "$me: $*"; }

# run_step NAME LOG OUTPUT... -- CMD...: runs CMD with stdout and stderr in LOG; OUTPUTs are
# the files it writes, removed when it is interrupted. Exit 1 when it fails.
run_step() {
    local name=$1 log=$2 rc
    shift 2
    step_name=$name
    step_files=("$log")
    while [[ $1 != -- ]]; do
        step_files+=("$1")
        shift
    done
    shift
    "$@" >"$log" 2>&1 &
    child=$!
    wait "$child"
    rc=$?
    child=""
    # lockprof's own "interrupted" (someone signalled it alone): the step is just as unfinished.
    [[ $rc -eq 130 ]] && on_signal INT
    if [[ $rc -ne 0 ]]; then
        echo "$me: FAILED: the $name step (lockprof exit $rc): see $log" >&2
        echo "$me: command: $*" >&2
        tail -n 3 "$log" | sed "s/^/$me:   | /" >&2
        exit 1
    fi
    step_files=()
    step_name=""
    done_steps+=("$name")
}

# --- 1. Machine facts -------------------------------------------------------------------------
progress "writing into $out (lockprof: $lockprof)"
progress "[1/6] machine facts: lockprof --version, doctor, events, list-locks"
run_step version "$out/version.txt" -- "$lockprof" --version
run_step doctor "$out/doctor.txt" -- "$lockprof" doctor
run_step events "$out/events.txt" -- "$lockprof" events
run_step list-locks "$out/list-locks.txt" -- "$lockprof" list-locks
cat /proc/cpuinfo >"$out/cpuinfo.txt" 2>/dev/null
uname -a >"$out/uname.txt" 2>/dev/null

doctor_line() { sed -n "s/^$1  *//p" "$out/doctor.txt" | head -n 1; }
arch=$(uname -m)
doctor_cpu=$(doctor_line cpu)
case $doctor_cpu in *"(aarch64,"*) arch=aarch64 ;; *"(x86_64,"*) arch=x86_64 ;; esac
cpus=$(nproc 2>/dev/null)
[[ $cpus =~ ^[0-9]+$ && $cpus -ge 1 ]] || cpus=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)
[[ $cpus =~ ^[0-9]+$ && $cpus -ge 1 ]] || cpus=1

# Flavours this binary has, from list-locks; LSE from its marks ("[needs LSE: not on this
# CPU]") and doctor's "LSE atomics" line.
has_lock() { grep -q "^$1 " "$out/list-locks.txt"; }
lse=absent
lse_why=""
if has_lock 'tas@lse'; then
    if grep -q '^tas@lse .*needs LSE: not on this CPU' "$out/list-locks.txt"; then
        lse=no
        lse_why="list-locks: tas@lse [needs LSE: not on this CPU]; doctor: $(doctor_line 'LSE atomics')"
    else
        lse=yes
    fi
fi
locks=""
skipped=""
for flavour in @llsc @lse @outline ""; do
    for algorithm in tas ttas cas; do
        name=$algorithm$flavour
        has_lock "$name" || continue
        if [[ $flavour == @lse && $lse != yes ]]; then
            skipped="$skipped $name"
            continue
        fi
        locks="$locks${locks:+,}$name"
    done
done
[[ -n $locks ]] || { echo "$me: FAILED: list-locks names none of tas, ttas, cas: see $out/list-locks.txt" >&2; exit 1; }
if [[ -n $skipped ]]; then
    progress "skipped${skipped} (this CPU has no LSE atomics: $lse_why)"
fi

# Events: the ones this binary's `lockprof events` lists (an older binary may lack an alias).
if [[ $arch == aarch64 ]]; then
    wanted="cycles instructions stxr_fail stxr_pass strex ldrex l1d_misses"
else
    wanted="cycles instructions cache_misses"
    # Locked instructions are the closest x86 analogue of tas storing on every try; only where
    # the kernel can count them (`lockprof events` says "yes").
    grep -q '^lock_loads .* yes ' "$out/events.txt" && wanted="$wanted lock_loads"
fi
events=""
for e in $wanted; do
    grep -q "^$e " "$out/events.txt" && events="$events${events:+,}$e"
done
[[ -n $events ]] || events=cycles

# Thread counts: powers of two up to the CPU count, and the CPU count itself; 1 always.
if [[ -n $threads_arg ]]; then
    threads=$(echo "1,$threads_arg" | tr ',' '\n' | sort -n -u | tr '\n' ',' | sed 's/,$//')
else
    threads=""
    t=1
    while [[ $t -le $cpus ]]; do
        threads="$threads${threads:+,}$t"
        t=$((t * 2))
    done
    [[ ",$threads," == *",$cpus,"* ]] || threads="$threads,$cpus"
fi
max_threads=${threads##*,}
if [[ $max_threads -gt $cpus ]]; then
    progress "note: --threads goes past the $cpus CPUs: those cells measure preemption (a holder descheduled), not the lock's hardware path"
fi

if [[ $quick -eq 1 ]]; then
    sweep_duration=${duration:-$QUICK_DURATION}
    sample_duration=$QUICK_SAMPLE_DURATION
    mode=quick
else
    sweep_duration=${duration:-$FULL_DURATION}
    sample_duration=$FULL_SAMPLE_DURATION
    mode=full
fi

# doctor's verdict (x86 hypervisor flag, DMI, the arm64 virt board's device tree) is the one
# lockprof records in every result's provenance too.
virtualisation=$(doctor_line virtualisation)
[[ -n $virtualisation ]] || virtualisation="none detected"

step_name=machine
step_files=("$out/machine.txt")
tmp_files=("$out/.machine.txt.tmp")
{
    echo "arch=$arch"
    echo "cpus=$cpus"
    echo "lse=$lse"
    echo "lse_why=$lse_why"
    echo "virtualisation=$virtualisation"
    echo "host=$host"
    echo "cpu=$doctor_cpu"
    echo "kernel=$(uname -srm)"
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "lockprof=$lockprof"
    echo "mode=$mode"
    echo "locks=$locks"
    echo "skipped=${skipped# }"
    echo "threads=$threads"
    echo "trials=$trials"
    echo "duration=$sweep_duration"
    echo "sample_duration=$sample_duration"
    echo "events=$events"
} >"$out/.machine.txt.tmp"
mv "$out/.machine.txt.tmp" "$out/machine.txt"
step_files=()
tmp_files=()
step_name=""
done_steps+=(machine)
progress "      $arch, $cpus CPUs, LSE: $lse, virtualisation: $virtualisation"

# --- 2. Acquire code --------------------------------------------------------------------------
progress "[2/6] acquire code of tas and cas in every flavour (list-locks --disasm)"
step_name=disasm
step_files=("$out/disasm.txt")
if { "$lockprof" list-locks --disasm tas && "$lockprof" list-locks --disasm cas; } >"$out/disasm.txt" 2>&1; then
    done_steps+=(disasm)
else
    progress "      no disassembly (needs GNU objdump and an unstripped binary; see disasm.txt); going on"
    done_steps+=(disasm-failed)
fi
step_files=()
step_name=""

# --- 3. The sweep -----------------------------------------------------------------------------
nlocks=$(echo "$locks" | tr ',' '\n' | grep -c .)
nthreads=$(echo "$threads" | tr ',' '\n' | grep -c .)
progress "[3/6] sweep: $nlocks locks x threads $threads x $trials trials of $sweep_duration ($((nlocks * nthreads * trials)) trials), events $events"
run_step sweep "$out/sweep.log" "$out/sweep.json" "$out/sweep.csv" -- \
    "$lockprof" --lock="$locks" --threads="$threads" --duration="$sweep_duration" \
    --trials="$trials" --event="$events" --output "$out/sweep.json" --csv "$out/sweep.csv"
grep 'lockprof: warning:' "$out/sweep.log" | sed "s/^/$me:       /"
# A lock that lost updates did not exclude: lockprof says so in the table; repeat it here.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lost_updates") c = i; next }
    c && $c + 0 > 0 { printf "%s: WARNING: MUTUAL EXCLUSION FAILED: %s at %s threads lost %s updates\n", me, $1, $5, $c }' \
    me="$me" "$out/sweep.csv"

# --- 4. Sampled run and report ----------------------------------------------------------------
if has_lock tas@llsc && has_lock cas@llsc; then sample_locks="tas@llsc,cas@llsc"; else sample_locks="tas,cas"; fi
sample_threads=1
[[ $max_threads -gt 1 ]] && sample_threads="1,$max_threads"
progress "[4/6] sampled run: $sample_locks at threads $sample_threads, $trials trials of $sample_duration, sampling cycles; HTML report"
run_step sample "$out/sample.log" "$out/sample.json" "$out/samples.json" "$out/sample.csv" "$out/report.html" -- \
    "$lockprof" --lock="$sample_locks" --threads="$sample_threads" --duration="$sample_duration" \
    --trials="$trials" --event="$events" --sample --sample-event cycles \
    --samples-out "$out/samples.json" --report "$out/report.html" \
    --output "$out/sample.json" --csv "$out/sample.csv"
grep '^note: sampling' "$out/sample.log" | sed "s/^/$me:       /"

# --- 5. Mechanism checks ----------------------------------------------------------------------
progress "[5/6] mechanism checks (thresholds at the top of $0)"
step_name=checks
step_files=("$out/verdicts.txt")
verdicts_for "$out" >"$out/verdicts.txt"
step_files=()
step_name=""
done_steps+=(checks)
sed 's/^/  /' "$out/verdicts.txt"
if [[ $virtualisation != "none detected" ]]; then
    echo "  note: measured under virtualisation or emulation: $virtualisation"
fi

# --- 6. Summary and bundle --------------------------------------------------------------------
progress "[6/6] summary.md and the bundle"
# The "provenance" object of a lockprof result file, as key=value lines (the JSON is written
# one key per line; strings lose their quotes, escapes stay as written).
provenance() {
    awk '/^  "provenance": \{/ { inside = 1; next }
         inside && /^  \}/ { exit }
         inside {
             line = $0; sub(/^ *"/, "", line); key = line; sub(/".*/, "", key)
             value = line; sub(/^[^"]*": */, "", value); sub(/,$/, "", value)
             sub(/^"/, "", value); sub(/"$/, "", value)
             print key "=" value
         }' "$1"
}
summary_tmp="$out/.summary.md.tmp"
step_name=summary
step_files=("$out/provenance.txt")
tmp_files=("$summary_tmp")
provenance "$out/sweep.json" >"$out/provenance.txt"
pv() { kv "$out/provenance.txt" "$1"; }
{
    echo "## lockprof hardware validation: $host, $(kv "$out/machine.txt" date)"
    echo
    echo "Produced by \`scripts/validate-hardware.sh\` ($mode mode: $trials trials of $sweep_duration per cell) with"
    echo "lockprof $(pv lockprof_version) ($(pv git_revision)); the whole folder is attached as $(basename "$bundle")."
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| cpu | $doctor_cpu |"
    midr=$(doctor_line MIDR)
    [[ -n $midr ]] && echo "| MIDR | $midr |"
    echo "| kernel | $(uname -srm) |"
    echo "| LSE atomics | $(doctor_line 'LSE atomics') |"
    spe=$(doctor_line SPE)
    [[ -n $spe ]] && echo "| SPE | $spe |"
    echo "| virtualisation | $virtualisation |"
    echo "| perf_event_paranoid | $(doctor_line perf_event_paranoid) |"
    core_pmu=$(doctor_line 'kernel core PMU')
    [[ -n $core_pmu ]] && echo "| kernel core PMU | $core_pmu |"
    echo "| kernel event sources | $(doctor_line 'kernel event sources') |"
    echo "| hardware counters | $(doctor_line 'perf_event (hardware)') |"
    echo "| lockprof build | $(pv compiler) $(pv build_type), flags \`$(pv compiler_flags)\`, assertions $( [[ $(pv assertions) == true ]] && echo ON || echo off) |"
    echo "| command | \`$(pv command_line)\` |"
    echo "| run at | $(pv timestamp_utc) |"
    echo
    if [[ $virtualisation != "none detected" ]]; then
        echo "**Measured under virtualisation or emulation ($virtualisation):** timings are the guest's, and"
        echo "hardware counters are whatever the hypervisor or emulator exposes (the gate below checks them)."
        echo
    fi
    if [[ $(pv assertions) == true ]]; then
        echo "**This lockprof was built with assertions on:** its timings are not those of a release build."
        echo
    fi
    [[ -n $skipped ]] && { echo "Skipped:${skipped} ($lse_why)."; echo; }
    echo "### Mechanism checks"
    echo
    echo "a. LL/SC: tas's store-exclusives per acquire grow with threads (its ldxr/stxr stores even while"
    echo "   the lock is held), cas's stay near 1 (it branches out before the stxr)."
    echo "b. LL/SC: tas's failed store-exclusives (stxr_fail) per acquire exceed cas's under contention."
    echo "c. LSE (swpa/casa): no store-exclusives at all."
    echo
    echo '```'
    cat "$out/verdicts.txt"
    echo '```'
    echo
    awk "$AWK_LOAD$AWK_TABLES" "$out/sweep.csv"
    echo
    if grep -q '^  acquire loop:\|^Annotation:\|^Explanation' "$out/sample.log"; then
        echo "### Sampled run ($sample_locks, threads $sample_threads): where the samples land"
        echo
        echo '```'
        awk '/^Annotation:/ || /^  acquire loop:/ { print } /^Explanation/ { expl = 1 } expl { print }' "$out/sample.log"
        echo '```'
        echo
    fi
    if grep -q '^note: ' "$out/sweep.log"; then
        echo "### lockprof's notes (sweep)"
        echo
        grep '^note: ' "$out/sweep.log" | sort -u | sed 's/^note: /- /'
        echo
    fi
    if grep -q '^advice: ' "$out/doctor.txt"; then
        echo "### lockprof doctor's advice"
        echo
        grep '^advice: ' "$out/doctor.txt" | sed 's/^advice: /- /'
        echo
    fi
    files="summary.md"
    for f in "$out"/*; do files="$files ${f##*/}"; done
    echo "Files in the bundle: $files"
} >"$summary_tmp"
mv "$summary_tmp" "$out/summary.md"
step_files=()
tmp_files=()
step_name=""
done_steps+=(summary)

bundle_tmp="$bundle.tmp"
tmp_files=("$bundle_tmp")
step_name=bundle
parent=$(dirname "$out")
base=$(basename "$out")
if ! tar -C "$parent" -czf "$bundle_tmp" "$base"; then
    rm -f "$bundle_tmp"
    echo "$me: FAILED: could not write $bundle (tar -czf)" >&2
    exit 1
fi
mv "$bundle_tmp" "$bundle"
tmp_files=()
step_name=""
done_steps+=(bundle)

size=$(wc -c <"$bundle" | tr -d ' ')
progress "done. Verdicts: $out/verdicts.txt; paste $out/summary.md into the post"
progress "bundle to attach: $bundle ($((size / 1024)) KiB)"
exit 0
