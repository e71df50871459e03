#!/usr/bin/env bash
# Configures and builds lockprof into a build folder.
#   scripts/build.sh [BUILD_DIR] [extra cmake arguments...]   (default: build, RelWithDebInfo)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift || true
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C "$build"
