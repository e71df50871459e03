#!/usr/bin/env bash
# What scripts/pgbench-profile.sh and scripts/drive-spinlocks.sh do alike after starting a
# `lockprof record` ($lockprof_pid) beside a pgbench run ($pgbench_pid). Sourced, not run.

# pgbench_run_collect PGBENCH_LOG: waits for both, clearing lockprof_pid and pgbench_pid (the
# callers' cleanup traps kill what those still name); sets lockprof_status and pgbench_status
# to their exit statuses and tps to pgbench's last "tps = N" figure (empty when it printed none).
pgbench_run_collect() {
    lockprof_status=0
    wait "$lockprof_pid" || lockprof_status=$?
    lockprof_pid=""
    pgbench_status=0
    wait "$pgbench_pid" || pgbench_status=$?
    pgbench_pid=""
    tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$1" | tail -n 1)
}
