#!/usr/bin/env bash
# One stage as scripts/test.sh runs it beside its x86 stages (its fuzz stage): runs COMMAND and
# appends "NAME|wall s|cpu s" to TIMES_FILE (the last argument, as start_beside passes it);
# exits with COMMAND's status.
#   scripts/lib/timed-stage.sh NAME COMMAND... TIMES_FILE
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
name=$1
times_out=${*: -1}
command=("${@:2:$#-2}")
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
# shellcheck source=children-cpu.sh
source "$root/scripts/lib/children-cpu.sh"
run_stage "$name" "$times_out" "${command[@]}"
