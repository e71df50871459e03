#!/usr/bin/env bash
# The aarch64 stage: cross-builds lockprof for aarch64-linux-gnu and proves the ARM paths under
# qemu-user, without ARM hardware (docs/aarch64.md):
#   1. unit tests and every lock x flavour excluding, under qemu -cpu max (LSE)
#   2. the same exclusion and the @lse refusal under -cpu cortex-a72 (ARMv8.0: LSE is SIGILL)
#   3. the no-perf_event path (qemu-user answers ENOSYS) and the timer-signal sampler
#   4. each flavour's instructions (aarch64-linux-gnu-objdump on the cross-built code)
#   5. ARM event aliases encoded by arm64 libpfm4 per core, with a fake /proc/cpuinfo in a
#      private mount namespace
# Prints "== aarch64: SKIPPED: <why> ==" and exits 0 where the toolchain cannot be installed.
#   LOCKPROF_AARCH64_BUILD=dir   build directory (default build-aarch64)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LOCKPROF_AARCH64_BUILD:-$root/build-aarch64}"
jobs="$(nproc)"
# The multiarch root, not /usr/aarch64-linux-gnu: the arm64 -dev packages install libc6:arm64,
# and the cross sysroot's older ld.so would load that newer libc through /etc/ld.so.cache;
# the mismatched pair hangs in the first pthread_create (docs/aarch64.md).
sysroot=/
start=$SECONDS

skip() {
  echo "== aarch64: SKIPPED: $* =="
  exit 0
}
fail() {
  echo "aarch64: FAILED: $*" >&2
  exit 1
}
section() { echo "== aarch64: $* =="; }

# --- toolchain --------------------------------------------------------------------------------
if ! setup_log="$("$root/scripts/setup.sh" --cross 2>&1)"; then
  skip "scripts/setup.sh --cross could not install the cross toolchain, qemu-user or the arm64 \
-dev packages: $(echo "$setup_log" | tail -n 1)"
fi
for tool in aarch64-linux-gnu-g++ aarch64-linux-gnu-objdump qemu-aarch64; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh --cross)"
done

section "cross build (RelWithDebInfo) in ${build#"$root"/}"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j "$jobs" lockprof lockprof_unit_tests lockprof_aarch64_tests lockprof_cli_tests | { grep -v '^\[' || true; }
[[ -x "$build/lockprof" ]] || fail "the cross build produced no lockprof"

# Guest binaries run under qemu-user; its execve runs host binaries (objdump, sh) natively.
run_on() {
  local cpu=$1
  shift
  qemu-aarch64 -cpu "$cpu" -L "$sysroot" "$@"
}
lockprof_on() {
  local cpu=$1
  shift
  run_on "$cpu" "$build/lockprof" "$@"
}
gtest_on() {
  local cpu=$1 binary=$2 filter=$3
  run_on "$cpu" "$build/tests/$binary" --gtest_filter="$filter" --gtest_brief=1 --gtest_color=no
}
expect_in() {  # expect_in FILE TEXT WHAT
  grep -qF -- "$2" "$1" || { sed 's/^/    /' "$1"; fail "$3: '$2' missing from the output above"; }
}

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# --- 1. -cpu max: everything --------------------------------------------------------------------
# Unit tests that cannot work under qemu-user, each for a reason of the emulator, not of
# aarch64: run natively by scripts/test.sh, listed here so none is dropped silently.
#  - PmuAliases.ArmModelNamesEncodeInLibpfm4 forks `sh -c /proc/self/exe ...` children, and
#    qemu-user (without binfmt_misc) cannot exec an aarch64 binary from a guest process; the
#    arm64 libpfm4 names are checked per core by ArmEventEncoding below instead.
#  - PmuAliases.X86ModelNamesEncodeInLibpfm4: the same child processes, for x86 models.
unit_excluded="PmuAliases.ArmModelNamesEncodeInLibpfm4:PmuAliases.X86ModelNamesEncodeInLibpfm4"
section "unit tests under qemu -cpu max (excluded: $unit_excluded)"
LOCKPROF_EXPECT_LSE=1 gtest_on max lockprof_unit_tests "-$unit_excluded"
section "every lock x flavour, disassembly, LSE under qemu -cpu max"
LOCKPROF_EXPECT_LSE=1 gtest_on max lockprof_aarch64_tests "*FlavourExclusion.*:LseFlavour.*:FlavourDisasm.*"

section "lockprof list-locks and --disasm (tas, cas: every flavour)"
lockprof_on max list-locks >"$out/list.txt"
head -n 12 "$out/list.txt"
lockprof_on max list-locks --disasm tas --delay none
lockprof_on max list-locks --disasm cas --delay none

# --- 2. -cpu cortex-a72: no LSE -----------------------------------------------------------------
section "qemu -cpu cortex-a72 (ARMv8.0, no LSE): exclusion and the @lse refusal"
LOCKPROF_EXPECT_LSE=0 gtest_on cortex-a72 lockprof_aarch64_tests "*FlavourExclusion.*:LseFlavour.*"
# The default build uses outline atomics: on this CPU they take the LL/SC path, so the lock
# tests that exercise ordering (try_lock against lock, the pg release models) run here too.
gtest_on cortex-a72 lockprof_unit_tests "MutualExclusion/*:TryLockExclusion/*:PgSlockRelease/*"
set +e
lockprof_on cortex-a72 --lock tas@lse --threads 1 --duration 20ms >"$out/refuse.txt" 2>&1
rc=$?
set -e
sed 's/^/    /' "$out/refuse.txt"
[[ $rc == 2 ]] || fail "lockprof --lock tas@lse on cortex-a72 exited $rc (2 expected; 132 is SIGILL)"
expect_in "$out/refuse.txt" "needs ARMv8.1 LSE atomics" "refusal of tas@lse"
echo "    ok: tas@lse refused with exit 2, no SIGILL"
lockprof_on cortex-a72 --lock tas,tas@llsc,tas@outline --threads 2 --duration 30ms --trials 1 \
  >"$out/a72.txt" 2>&1 || { cat "$out/a72.txt"; fail "LL/SC and outline flavours on cortex-a72"; }
expect_in "$out/a72.txt" "tas@outline" "outline flavour on an ARMv8.0 core"
echo "    ok: tas, tas@llsc, tas@outline run on cortex-a72 (outline helpers take the LL/SC path)"

# --- 3. no perf_event (ENOSYS) and the timer-signal sampler ---------------------------------------
section "perf_event_open is ENOSYS under qemu-user: the run degrades, software metrics stay"
lockprof_on max --lock tas@llsc,cas@lse --threads 2 --duration 30ms --trials 1 \
  --event stxr_fail,cycles,task_clock >"$out/enosys.txt" 2>&1 ||
  { cat "$out/enosys.txt"; fail "a run with unavailable counters must complete"; }
sed 's/^/    /' "$out/enosys.txt"
expect_in "$out/enosys.txt" "acquires/s" "software metrics"
expect_in "$out/enosys.txt" "(ENOSYS)" "the counters line"
lines="$(grep -c 'no perf_event_open (ENOSYS)' "$out/enosys.txt" || true)"
echo "    ok: run completed; ENOSYS explained on $lines line(s)"

section "doctor under qemu"
lockprof_on max doctor | sed 's/^/    /'

section "timer-signal sampler: samples of tas@llsc land in its LL/SC loop"
lockprof_on max --lock tas@llsc --threads 2 --duration 300ms --trials 1 --delay none --sample \
  --sampler timer --objdump aarch64-linux-gnu-objdump --samples-out "$out/samples.json" \
  >"$out/sample.txt" 2>&1 || { cat "$out/sample.txt"; fail "timer-sampled run"; }
head -n 60 "$out/sample.txt" | sed 's/^/    /'
python3 - "$out/sample.txt" <<'EOF' || fail "tas@llsc samples are not attributed to its LL/SC loop"
import re, sys
text = open(sys.argv[1]).read()
# The annotation marks the acquire loop; the hottest instructions of tas@llsc must include its
# exclusive pair, and the acquire loop must hold a real share of the samples.
share = re.search(r"acquire loop[^\n]*?(\d+(?:\.\d+)?)%", text)
if not share:
    sys.exit("no acquire-loop share in the annotation")
if not re.search(r"\b(ldaxr|ldxr)\b", text) or not re.search(r"\bstxr\b", text):
    sys.exit("the annotation does not show the ldxr/stxr loop")
print(f"    ok: acquire loop holds {share.group(1)}% of tas@llsc samples, ldxr/stxr annotated")
EOF

# --- 5. ARM event encoding per core ---------------------------------------------------------------
section "ARM event aliases per core (arm64 libpfm4, fake /proc/cpuinfo in unshare -m)"
if ! unshare -m true 2>/dev/null; then
  echo "    SKIPPED: unshare -m is not permitted here (needs root or CAP_SYS_ADMIN), so no fake /proc/cpuinfo"
else
  fake_cpuinfo() {  # fake_cpuinfo IMPLEMENTER PART: two cores of one MIDR, as the kernel prints
    local cpu
    for cpu in 0 1; do
      printf 'processor\t: %s\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics cpuid\n' "$cpu"
      printf 'CPU implementer\t: %s\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: %s\nCPU revision\t: 2\n\n' "$1" "$2"
    done
  }
  for spec in neoverse-n1:0x41:0xd0c kunpeng-920:0x48:0xd01 cortex-a57:0x41:0xd07 unknown:0x41:0xdff; do
    IFS=: read -r name implementer part <<<"$spec"
    fake_cpuinfo "$implementer" "$part" >"$out/cpuinfo-$name"
    LOCKPROF_FAKE_CPU=$name unshare -m sh -c '
      mount --bind "$1" /proc/cpuinfo &&
      qemu-aarch64 -cpu max -L "$2" "$3/tests/lockprof_aarch64_tests" --gtest_filter=ArmEventEncoding.* \
        --gtest_brief=1 --gtest_color=no &&
      qemu-aarch64 -cpu max -L "$2" "$3/lockprof" doctor | grep -E "^ *(cpu|MIDR|libpfm4 PMUs)"' \
      sh "$out/cpuinfo-$name" "$sysroot" "$build" || fail "ARM event encoding on $name"
  done
fi

echo "== aarch64: all checks passed in $((SECONDS - start)) s =="
