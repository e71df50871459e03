# Sourced by scripts/test.sh and scripts/lib/aarch64-stages.sh. count_children_cpu FILE sets
# children_cpu to the user + system seconds of the children this shell waited for, from bash's
# `times` written to FILE. Call it as a command, not in $(...): a subshell's children are not
# these.
children_cpu=0
count_children_cpu() {
  times >"$1"
  children_cpu=$(awk 'END { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
                            printf "%d\n", n }' "$1")
}
