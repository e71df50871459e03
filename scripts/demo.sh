#!/usr/bin/env bash
# The main job on a fresh Debian machine: install what is missing, build, and run TAS vs TTAS
# vs CAS with the shape of the 2020 PostgreSQL thread (profiles/tas-vs-cas.ini), printing the
# table and the explanation. Extra arguments go to lockprof (e.g. --threads=2,4 --trials=1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build" >/dev/null
echo "== lockprof doctor (what this machine can count) =="
"$root/build/lockprof" doctor || true
echo
echo "== lockprof --profile profiles/tas-vs-cas.ini $* =="
exec "$root/build/lockprof" --profile "$root/profiles/tas-vs-cas.ini" "$@"
