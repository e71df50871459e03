#!/usr/bin/env bash
# Installs the Debian packages lockprof needs to build and test, skipping what is present.
#   scripts/setup.sh            build + test dependencies (native x86_64/aarch64)
#   scripts/setup.sh --cross    also the aarch64 cross toolchain, qemu-user and arm64 libraries
#   scripts/setup.sh --extras   also chromium (SVG/report rendering tests), postgresql with its
#                               server headers (the drive_spinlocks module), and clang with its runtimes (libFuzzer, scripts/test-fuzz.sh)
#   scripts/setup.sh --system   also qemu-system-arm, cpio and e2fsprogs (the emulated arm64
#                               system of scripts/test-arm-system.sh)
set -euo pipefail

want_cross=0
want_extras=0
want_system=0
for arg in "$@"; do
  case "$arg" in
    --cross) want_cross=1 ;;
    --extras) want_extras=1 ;;
    --system) want_system=1 ;;
    *) echo "setup.sh: unknown argument '$arg' (use --cross, --extras, --system)" >&2; exit 2 ;;
  esac
done

packages=(cmake ninja-build g++ pkg-config git binutils clang-format
          libpfm4-dev libfmt-dev libboost-program-options-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libdw-dev libelf-dev libxml2-dev linux-perf bc
          libprotobuf-dev protobuf-compiler golang-github-google-pprof-dev zlib1g-dev
          libfuse3-dev fuse3)
# pprof output: libprotobuf and protoc compile pprof's own profile.proto, which
# golang-github-google-pprof-dev installs; zlib gzips the files.
# python3: the Layering test (tests/layering/check_layers.py) and the arm64 system's checks.
command -v python3 >/dev/null || packages+=(python3)
if [[ $want_cross == 1 ]]; then
  packages+=(g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user)
fi
if [[ $want_system == 1 ]]; then
  packages+=(qemu-system-arm cpio e2fsprogs)
fi
if [[ $want_extras == 1 ]]; then
  # golang-go: `go tool pprof` reads lockprof's pprof files in the integration test;
  # python3-jsonschema checks --speedscope files against speedscope's schema (fetched with npm
  # where npm is installed; not installed here, since Debian's npm conflicts with NodeSource's
  # nodejs, which carries its own npm).
  # postgresql-server-dev-all: the default server's headers and PGXS, to build the
  # drive_spinlocks module (bench/drive_spinlocks, scripts/drive-spinlocks.sh).
  # clang and libclang-rt-dev (libFuzzer and clang's sanitizer runtimes; Debian 12 names the
  # versioned runtime package libclang-rt-14-dev and this one depends on it): the fuzz targets.
  packages+=(chromium postgresql postgresql-contrib postgresql-server-dev-all libxml2-utils
             golang-go python3-jsonschema clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Multiarch libraries for the cross build (cmake/toolchain-aarch64.cmake); libxml2-dev because
# the unit tests parse flamegraph SVGs; libprotobuf-dev for the target's libprotobuf (protoc is
# the host's). No gmock: no test uses it.
arm64_packages=(libpfm4-dev:arm64 libfmt-dev:arm64 libboost-program-options-dev:arm64
                libgtest-dev:arm64 libdw-dev:arm64 libelf-dev:arm64 libxml2-dev:arm64
                zlib1g-dev:arm64 libprotobuf-dev:arm64)
arm64_missing=()
if [[ $want_cross == 1 ]]; then
  for p in "${arm64_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || arm64_missing+=("$p")
  done
fi

if [[ ${#missing[@]} -eq 0 && ${#arm64_missing[@]} -eq 0 ]]; then
  echo "setup: all packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
if [[ ${#arm64_missing[@]} -gt 0 ]]; then
  $sudo dpkg --add-architecture arm64
fi
echo "setup: installing ${missing[*]} ${arm64_missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" "${arm64_missing[@]}" >/dev/null
echo "setup: done"
