# Sourced by scripts/test.sh, scripts/lib/aarch64-stages.sh and scripts/lib/timed-stage.sh.
# count_children_cpu FILE sets
# children_cpu to the user + system seconds of the children this shell waited for, from bash's
# `times` written to FILE. Call it as a command, not in $(...): a subshell's children are not
# these.
children_cpu=0
count_children_cpu() {
  times >"$1"
  children_cpu=$(awk 'END { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
                            printf "%d\n", n }' "$1")
}
# run_stage NAME TIMES_FILE COMMAND...: runs COMMAND and appends "NAME|wall s|cpu s" to
# TIMES_FILE; returns COMMAND's status. Needs cpu_file, a scratch file, set by the caller.
# shellcheck disable=SC2154  # cpu_file: the caller's
run_stage() {
  local name=$1 times_out=$2 start=$SECONDS before rc=0
  shift 2
  count_children_cpu "$cpu_file"
  before=$children_cpu
  "$@" || rc=$?
  count_children_cpu "$cpu_file"
  echo "$name|$((SECONDS - start))|$((children_cpu - before))" >>"$times_out"
  return $rc
}
