#!/usr/bin/env bash
# The emulated arm64 system stage: boots Debian's arm64 kernel under qemu-system-aarch64
# (-M virt) with the cross-built lockprof and proves its hardware-event paths against a real
# kernel PMU driver (armv8_pmuv3 driving QEMU's emulated PMUv3), which no other machine here
# has. docs/aarch64.md says what this proves and what still needs silicon. Per CPU model:
#   neoverse-n1 (-icount shift=0: instructions and cycles exact): doctor, events, exact
#       per-acquire counts checked against the measured loop's disassembly, multiplexing,
#       sampling on hardware cycles with annotation, an explanation from counted events,
#       `record -- CMD` with hardware counters and hardware-event sampling
#   neoverse-n1 (no icount): the unit and CLI tests that skip without a PMU, and
#       scripts/validate-hardware.sh
#   cortex-a57 (ARMv8.0, no LSE): @lse refused, LL/SC and outline flavours counted
#   max (an implementer libpfm4 has no table for): raw-code event fallbacks counted
# Everything the guest needs comes from Debian packages, downloaded once into the build tree
# (BUILD/arm-system/debs); each guest's outputs stay in BUILD/arm-system/out/MODEL for a
# reviewer, and tests/arm-system/check.py asserts on them.
#   LOCKPROF_AARCH64_BUILD=dir   the cross build (default build-aarch64; built if missing)
#   LOCKPROF_ARM_SYSTEM_MODELS="neoverse-n1 cortex-a57"   run only these stages
#   LOCKPROF_NATIVE_BUILD=dir    the host build whose lockprof re-annotates guest samples (build)
#   LOCKPROF_GUEST_CLI_FILTER=... LOCKPROF_GUEST_UNIT_FILTER=...   other gtest filters for the
#                                neoverse-n1-tests guest (chasing one test; its checks then
#                                say which required tests did not run)
# Prints "== arm-system: SKIPPED: <why> ==" and exits 0 where qemu-system-aarch64 or the
# packages cannot be had; otherwise any failed check fails it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${LOCKPROF_AARCH64_BUILD:-$root/build-aarch64}"
sysdir="$build/arm-system"
start=$SECONDS

skip() {
    echo "== arm-system: SKIPPED: $* =="
    exit 0
}
fail() {
    echo "arm-system: FAILED: $*" >&2
    exit 1
}
section() { echo "== arm-system: $* =="; }

# --- tools and packages -----------------------------------------------------------------------
if ! setup_log="$("$root/scripts/setup.sh" --cross --system 2>&1)"; then
    skip "scripts/setup.sh --cross --system could not install qemu-system-arm, cpio or the \
cross toolchain: $(echo "$setup_log" | tail -n 1)"
fi
for tool in qemu-system-aarch64 qemu-aarch64 cpio mke2fs python3 aarch64-linux-gnu-objdump; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh --cross --system)"
done

if [[ ! -x $build/lockprof || ! -x $build/tests/lockprof_cli_tests ]]; then
    section "cross build (RelWithDebInfo) in ${build#"$root"/}"
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64.cmake" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build" lockprof lockprof_unit_tests lockprof_cli_tests | { grep -v '^\[' || true; }

# Debian's arm64 packages for the guest, fetched as files (never installed on this host:
# busybox-static:arm64 would replace the host's /bin/busybox, and the arm64 binutils clash
# with the cross binutils). The kernel is the one linux-image-cloud-arm64 depends on today.
kernel_package=$(apt-cache depends linux-image-cloud-arm64:arm64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p' | head -n 1)
[[ -n $kernel_package ]] || skip "apt-cache knows no linux-image-cloud-arm64:arm64 (dpkg \
--add-architecture arm64 and apt-get update; scripts/setup.sh --cross does both)"
guest_packages=("$kernel_package" busybox-static bash libtinfo6 binutils-aarch64-linux-gnu
    libbinutils libctf0 libctf-nobfd0 libjansson4 libzstd1)
mkdir -p "$sysdir/debs"
missing=()
for p in "${guest_packages[@]}"; do
    compgen -G "$sysdir/debs/${p}_*_arm64.deb" >/dev/null || missing+=("$p:arm64")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    section "downloading ${missing[*]}"
    # apt-get download runs as _apt where it can; a folder _apt may write keeps it sandboxed.
    chown _apt "$sysdir/debs" 2>/dev/null || true
    (cd "$sysdir/debs" && apt-get download -qq "${missing[@]}" 2>&1 | grep -v 'unsandboxed' || true)
    for p in "${missing[@]}"; do
        compgen -G "$sysdir/debs/${p%:arm64}_*_arm64.deb" >/dev/null ||
            skip "could not download $p from Debian (apt-get download $p)"
    done
fi
pkgroot="$sysdir/pkgroot"
if [[ ! -e $pkgroot/.complete ]]; then
    rm -rf "$pkgroot"
    mkdir -p "$pkgroot"
    for deb in "$sysdir"/debs/*.deb; do dpkg-deb -x "$deb" "$pkgroot"; done
    touch "$pkgroot/.complete"
fi
kernel=$(compgen -G "$pkgroot/boot/vmlinuz-*" | head -n 1)
[[ -n $kernel ]] || fail "no kernel in $kernel_package"
modules=$(compgen -G "$pkgroot/lib/modules/*/kernel" | head -n 1)

# --- the guest's disks ---------------------------------------------------------------------
# Root disk: an ext4 image made from a folder (mke2fs -d), mounted read-only by the guest.
# lockprof and its test binaries keep their host paths (the CLI tests run the path compiled
# into them); libraries are whatever the arm64 loader resolves for them.
section "guest image from $kernel_package and the cross build"
rootfs="$sysdir/rootfs"
rm -rf "$rootfs"
mkdir -p "$rootfs"/{bin,usr/bin,lib,etc,proc,sys,dev,tmp,stage,root}
cp "$pkgroot/bin/busybox" "$rootfs/bin/busybox"
for applet in $(qemu-aarch64 -L / "$rootfs/bin/busybox" --list); do
    [[ $applet == bash || $applet == busybox ]] || ln -s busybox "$rootfs/bin/$applet"
done
cp "$pkgroot/bin/bash" "$rootfs/bin/bash"
cp "$pkgroot/usr/bin/aarch64-linux-gnu-objdump" "$rootfs/usr/bin/"
ln -s aarch64-linux-gnu-objdump "$rootfs/usr/bin/objdump"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\n' >"$rootfs/etc/group"
binaries=("$build/lockprof" "$build/tests/lockprof_unit_tests" "$build/tests/lockprof_cli_tests"
    "$build/tests/lockprof_spin_helper" "$build/tests/liblockprof_spin_plugin.so"
    "$build/tests/lockprof_dwarf_helper" "$build/tests/lockprof_threaded_target"
    "$build/tests/lockprof_twelve_line_spin")
for binary in "${binaries[@]}"; do
    mkdir -p "$rootfs$(dirname "$binary")"
    cp "$binary" "$rootfs$binary"
done
# What the CLI tests and the validation script read from the source tree.
for path in profiles scripts/validate-hardware.sh tests/cli/fixtures; do
    [[ -e $root/$path ]] || continue
    mkdir -p "$rootfs$root/$(dirname "$path")"
    cp -r "$root/$path" "$rootfs$root/$path"
done
copy_libraries() {  # the shared libraries (and loader) the arm64 loader resolves for $1
    local listing
    listing=$(LD_LIBRARY_PATH="$pkgroot/usr/lib/aarch64-linux-gnu:$pkgroot/lib/aarch64-linux-gnu" \
        qemu-aarch64 -L / /lib/ld-linux-aarch64.so.1 --list "$1") ||
        fail "the arm64 loader cannot resolve the libraries of $1: $listing"
    if grep -q 'not found' <<<"$listing"; then
        fail "libraries of $1 not found: $(grep 'not found' <<<"$listing" | tr -s ' \t\n' ' ')"
    fi
    local library
    for library in $(awk '/=> \//{print $3} /^\t\/lib/{print $1}' <<<"$listing"); do
        local target="/lib/aarch64-linux-gnu/${library##*/}"
        [[ $library == /lib/ld-linux-aarch64.so.1 ]] && target=$library
        [[ -e $rootfs$target ]] || cp -L "$library" "$rootfs$target"
    done
}
mkdir -p "$rootfs/lib/aarch64-linux-gnu"
for binary in "${binaries[@]}" "$rootfs/bin/bash" "$rootfs/usr/bin/aarch64-linux-gnu-objdump"; do
    copy_libraries "$binary"
done
cp "$root/scripts/lib/arm-system-guest.sh" "$rootfs/stage/guest.sh"
# Test filters for the guest: the hardware-PMU tests that skip elsewhere, plus the counting,
# sampling and CLI tests around them, record --spin's uprobe tests (arm64 uprobes: they skip
# under qemu-user, which has no perf_event), and --call-graph dwarf's (arm64's user registers
# and stack copies, unwound with the aarch64 register table).
cat >"$rootfs/stage/paths.sh" <<EOF
LOCKPROF_BUILD='$build'
LOCKPROF_SOURCE='$root'
LOCKPROF_GUEST_UNIT_FILTER='${LOCKPROF_GUEST_UNIT_FILTER:-Pmu*:UprobeSampler.*:PerfSampler.*:TimerSampler.*:MakeSampler.*}'
LOCKPROF_GUEST_CLI_FILTER='${LOCKPROF_GUEST_CLI_FILTER:-CliPmu.*:CliSampling.*:CliRecordSpin.*:CliCallGraph.*:*CliRecordIntegrity*}'
EOF
rootimg="$sysdir/root.img"
rm -f "$rootimg"
size_mb=$(($(du -sm "$rootfs" | cut -f1) * 5 / 4 + 64))
mke2fs -q -t ext4 -L lockprof-root -d "$rootfs" "$rootimg" "${size_mb}M" ||
    fail "mke2fs -d could not make the guest's root disk"

# Initramfs: busybox, the virtio block modules, /init.
initdir="$sysdir/initramfs"
rm -rf "$initdir"
mkdir -p "$initdir"/{bin,modules}
cp "$pkgroot/bin/busybox" "$initdir/bin/busybox"
for module in virtio/virtio_ring virtio/virtio virtio/virtio_mmio block/virtio_blk; do
    cp "$modules/drivers/$module.ko" "$initdir/modules/"
done
install -m 755 "$root/scripts/lib/arm-system-init.sh" "$initdir/init"
(cd "$initdir" && find . | cpio -o -H newc --quiet | gzip -1) >"$sysdir/initramfs.gz"
echo "    kernel $(basename "$kernel"), root disk ${size_mb} MiB, initramfs $(du -k "$sysdir/initramfs.gz" | cut -f1) KiB"

# --- boot each stage ---------------------------------------------------------------------------
boot() {  # boot STAGE CPU TIMEOUT [qemu args...]: run the stage, unpack its outputs
    local stage=$1 cpu=$2 limit=$3
    shift 3
    local outdir="$sysdir/out/$stage"
    rm -rf "$outdir"
    mkdir -p "$outdir"
    truncate -s 256M "$sysdir/out/$stage.tar"
    local boot_start=$SECONDS rc=0
    timeout "$limit" qemu-system-aarch64 -M virt -cpu "$cpu" -smp 2 -m 2048 -nographic \
        -no-reboot -nic none "$@" \
        -kernel "$kernel" -initrd "$sysdir/initramfs.gz" \
        -append "console=ttyAMA0 quiet panic=-1 lockprof.model=$stage" \
        -drive "file=$rootimg,if=none,id=root,format=raw,readonly=on" \
        -device virtio-blk-device,drive=root,serial=lockprof-root \
        -drive "file=$sysdir/out/$stage.tar,if=none,id=out,format=raw" \
        -device virtio-blk-device,drive=out,serial=lockprof-out \
        </dev/null >"$outdir/console.txt" 2>&1 || rc=$?
    tar xf "$sysdir/out/$stage.tar" -C "$outdir" 2>/dev/null || true
    rm -f "$sysdir/out/$stage.tar"
    if [[ $rc != 0 || ! -e $outdir/stage.log ]]; then
        sed 's/^/    /' "$outdir/console.txt" | tail -n 40
        [[ $rc == 124 ]] && fail "the $stage guest did not finish within $limit s"
        fail "the $stage guest wrote no outputs (qemu exit $rc; console above)"
    fi
    sed 's/^/    /' "$outdir/stage.log"
    echo "    guest $stage ($cpu $*): $((SECONDS - boot_start)) s; outputs in ${outdir#"$root"/}"
}
# A lockprof built for this host (scripts/test.sh builds it first) re-annotates the guest's
# samples here, as a user without binutils on the target would.
native=()
if [[ -x ${LOCKPROF_NATIVE_BUILD:-$root/build}/lockprof ]]; then
    native=("${LOCKPROF_NATIVE_BUILD:-$root/build}/lockprof")
else
    echo "    note: no native build in ${LOCKPROF_NATIVE_BUILD:-$root/build}: annotating the guest's samples on this host is not checked"
fi
check() {  # check STAGE: the host-side assertions on a stage's outputs
    python3 "$root/tests/arm-system/check.py" "$1" "$sysdir/out/$1" "$build" "${native[@]}" ||
        fail "checks of the $1 guest failed (outputs in $sysdir/out/$1)"
}

models="${LOCKPROF_ARM_SYSTEM_MODELS:-neoverse-n1 neoverse-n1-tests cortex-a57 max}"
for stage in $models; do
    case $stage in
    neoverse-n1)
        section "neoverse-n1 under -icount shift=0: exact counts, multiplexing, sampling, record"
        boot neoverse-n1 neoverse-n1 600 -icount shift=0
        ;;
    neoverse-n1-tests)
        section "neoverse-n1: unit and CLI tests on a hardware PMU, validate-hardware.sh"
        # The guest stops its unit, cli and validate steps at 240, 600 and 240 s.
        boot neoverse-n1-tests neoverse-n1 1200
        ;;
    cortex-a57)
        section "cortex-a57 (ARMv8.0, no LSE): @lse refused, LL/SC and outline counted"
        boot cortex-a57 cortex-a57 300
        ;;
    max)
        section "max (implementer 0x00): raw event fallbacks"
        boot max max 300
        ;;
    *) fail "LOCKPROF_ARM_SYSTEM_MODELS: unknown stage '$stage'" ;;
    esac
    check "$stage"
done
# The guests as hosts of one cross-host report (docs/reports.md, "Several hosts: lockprof report A.json B.json ..."), read by the
# native lockprof as a reviewer's machine would read results mailed from elsewhere.
hosts=()
for stage in $models; do
    [[ -s $sysdir/out/$stage/hosts.json ]] && hosts+=("$sysdir/out/$stage/hosts.json")
done
if [[ ${#hosts[@]} -ge 2 && ${#native[@]} -eq 1 ]]; then
    section "the guests in one cross-host report"
    "${native[0]}" report "${hosts[@]}" >"$sysdir/out/hosts.txt" 2>&1 ||
        { cat "$sysdir/out/hosts.txt"; fail "lockprof report of the guests' results failed"; }
    "${native[0]}" report "${hosts[@]}" -o "$sysdir/out/hosts.html" >/dev/null ||
        fail "lockprof report -o of the guests' results failed"
    for stage in $models; do
        [[ -s $sysdir/out/$stage/hosts.json ]] || continue
        grep -q "qemu-system-$stage" "$sysdir/out/hosts.txt" ||
            { cat "$sysdir/out/hosts.txt"; fail "the cross-host report does not name qemu-system-$stage"; }
    done
    grep -q "^cas vs tas: " "$sysdir/out/hosts.txt" ||
        { cat "$sysdir/out/hosts.txt"; fail "the cross-host report has no cas vs tas summary"; }
    sed -n '/^cas vs tas (/,/^cas vs tas: /p' "$sysdir/out/hosts.txt" | sed 's/^/    /'
fi
echo "== arm-system: all checks passed in $((SECONDS - start)) s =="
