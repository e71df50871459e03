#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what is missing, builds, runs every
# test through CTest, then the sanitizer builds (ASan+UBSan, TSan) of the unit tests.
#   LOCKPROF_SKIP_SANITIZERS=1 scripts/test.sh   skips the sanitizer builds (local iteration)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs="$(nproc)"
"$root/scripts/setup.sh"

echo "== build (RelWithDebInfo) =="
"$root/scripts/build.sh" "$root/build"
echo "== tests =="
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

if [[ "${LOCKPROF_SKIP_SANITIZERS:-0}" != 1 ]]; then
  for sanitizer in address,undefined thread; do
    dir="$root/build-san-${sanitizer%%,*}"
    echo "== unit tests under -fsanitize=$sanitizer =="
    "$root/scripts/build.sh" "$dir" -DLOCKPROF_SANITIZE="$sanitizer" >/dev/null
    # TSan needs the address space layout it expects; ASLR-heavy kernels break it.
    runner=()
    if [[ $sanitizer == thread ]] && command -v setarch >/dev/null; then runner=(setarch "$(uname -m)" -R); fi
    "${runner[@]}" ctest --test-dir "$dir" -L unit --output-on-failure -j "$jobs"
  done
fi
echo "== all tests passed =="
