#!/usr/bin/env bash
# The two aarch64 stages one after the other, as scripts/test.sh runs them beside its x86 stages:
# scripts/test-aarch64.sh (cross build, qemu-user), then scripts/test-arm-system.sh (the emulated
# arm64 system; it needs the cross build and the native build/ lockprof). Appends one
# "name|wall s|cpu s" line per stage to TIMES_FILE; exits with the first failure's status.
#   scripts/lib/aarch64-stages.sh TIMES_FILE
# Honours LOCKPROF_SKIP_ARM_SYSTEM=1 (the first stage only).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
times_out="$1"
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
# shellcheck source=children-cpu.sh
source "$root/scripts/lib/children-cpu.sh"
run_stage() {  # run_stage NAME SCRIPT
  local name=$1 script=$2 start=$SECONDS before rc=0
  count_children_cpu "$cpu_file"
  before=$children_cpu
  "$script" || rc=$?
  count_children_cpu "$cpu_file"
  echo "$name|$((SECONDS - start))|$((children_cpu - before))" >>"$times_out"
  return $rc
}
run_stage aarch64 "$root/scripts/test-aarch64.sh" || exit $?
if [[ ${LOCKPROF_SKIP_ARM_SYSTEM:-0} != 1 ]]; then
  run_stage arm-system "$root/scripts/test-arm-system.sh" || exit $?
fi
