#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests/integration/postgres_record_test.cpp,
# scripts/pgbench-profile.sh and bench/bench-attach.sh: TCP on 127.0.0.1 only, its unix socket
# in a private folder, trust authentication, superuser `postgres`, nothing created in it.
#
# usage: pg-cluster.sh bin              print the bin folder of the newest installed PostgreSQL
#                                       (/usr/lib/postgresql/<version>/bin; $PG_BIN overrides)
#        pg-cluster.sh start DIR PORT   initdb into DIR/data, start listening on 127.0.0.1:PORT
#                                       with the socket in DIR/sock, return once it accepts
#                                       connections (server log: DIR/server.log)
#        pg-cluster.sh start-any DIR    the same on a free port near 54329; prints the port
#        pg-cluster.sh stop DIR         stop at once (pg_ctl stop -m immediate), remove DIR
#
# As root, initdb and the server run as user `postgres` (runuser) and DIR is chowned to it, so
# every folder above DIR must be searchable by that user (/tmp is; /root is not). Otherwise
# they run as the calling user. Connect with: psql -h 127.0.0.1 -p PORT -U postgres postgres
# Exit status: 0 done, 1 failed (one line on stderr says why), 2 bad usage.
# Sourcing the file defines pg_cluster_bin, pg_cluster_start and pg_cluster_stop instead.

pg_cluster_die() {
    echo "pg-cluster: $*" >&2
    return 1
}

pg_cluster_bin() {
    local bin="${PG_BIN:-}"
    if [[ -z $bin ]]; then
        bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    fi
    [[ -x $bin/initdb && -x $bin/pg_ctl && -x $bin/postgres ]] ||
        pg_cluster_die "PostgreSQL is not installed (no initdb/pg_ctl/postgres under" \
            "/usr/lib/postgresql/*/bin); install it (Debian: apt-get install postgresql) or set PG_BIN" ||
        return 1
    echo "$bin"
}

# Runs a command as the cluster's owner: `postgres` when we are root, else ourselves.
pg_cluster_as_owner() {
    if ((EUID == 0)); then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_cluster_start() {
    local dir="${1:?}" port="${2:?}" bin
    bin=$(pg_cluster_bin) || return 1
    [[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) ||
        pg_cluster_die "port '$port' is not a number in 1-65535" || return 1
    [[ ! -e $dir/data ]] ||
        pg_cluster_die "$dir/data already exists; stop that cluster or pick another folder" ||
        return 1
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    # The socket path (DIR/sock/.s.PGSQL.PORT) must fit sun_path, 107 bytes.
    ((${#dir} + 22 <= 107)) ||
        pg_cluster_die "'$dir' is too long for a unix socket path; use a shorter folder" ||
        return 1
    : >"$dir/.pg-cluster"  # marks DIR as ours, so `stop` may remove it
    mkdir -p "$dir/sock"
    if ((EUID == 0)); then
        id postgres >/dev/null 2>&1 ||
            pg_cluster_die "no user 'postgres' to run the server as (root cannot);" \
                "create it or install the postgresql package" || return 1
        chown -R postgres: "$dir"
        runuser -u postgres -- test -w "$dir" ||
            pg_cluster_die "user postgres cannot reach '$dir' (a folder above it is not" \
                "searchable, e.g. under /root); use a folder under /tmp" || return 1
    fi
    # Runs from DIR: as postgres, the caller's working folder may be unreadable.
    if ! (cd "$dir" && pg_cluster_as_owner timeout 120 "$bin/initdb" -D "$dir/data" -U postgres \
            --auth=trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1); then
        pg_cluster_die "initdb failed in $dir/data: $(tail -n 1 "$dir/initdb.log")"
        return 1
    fi
    # Settings go into the config file, so no path needs quoting through pg_ctl -o.
    cat >>"$dir/data/postgresql.conf" <<EOF
# pg-cluster.sh
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/sock'
EOF
    if ! (cd "$dir" && pg_cluster_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
            -w -t 60 start >/dev/null 2>&1); then
        pg_cluster_die "server did not start on 127.0.0.1:$port:" \
            "$(grep -hE 'already in use|FATAL|PANIC' "$dir/server.log" 2>/dev/null | head -n 1)" \
            "(full log: $dir/server.log)"
        return 1
    fi
    local tries
    for ((tries = 0; tries < 100; tries++)); do
        "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1 && return 0
        sleep 0.1
    done
    pg_cluster_die "server started but does not accept connections on 127.0.0.1:$port;" \
        "see $dir/server.log"
}

pg_cluster_stop() {
    local dir="${1:?}" bin pid
    [[ -e $dir ]] || return 0
    [[ -e $dir/.pg-cluster ]] ||
        pg_cluster_die "'$dir' was not made by pg-cluster.sh start; not removing it" || return 1
    if [[ -f $dir/data/postmaster.pid ]]; then
        bin=$(pg_cluster_bin) || return 1
        (cd "$dir" && pg_cluster_as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 \
            stop >/dev/null 2>&1) || true
        # Still there (pg_ctl failed or timed out): kill the postmaster; its children follow.
        if [[ -f $dir/data/postmaster.pid ]]; then
            pid=$(head -n 1 "$dir/data/postmaster.pid")
            [[ $pid =~ ^[0-9]+$ ]] && kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
        fi
    fi
    rm -rf "$dir"
}

# Starts the cluster on a free port near 54329 (three random tries, for ports other servers
# hold) and prints the port. The last try's error stays on stderr.
pg_cluster_start_any() {
    local dir="${1:?}" candidate
    for _ in 1 2 3; do
        candidate=$((54329 + RANDOM % 1000))
        if pg_cluster_start "$dir" "$candidate"; then
            echo "$candidate"
            return 0
        fi
        pg_cluster_stop "$dir" || true
    done
    return 1
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -euo pipefail
    usage="usage: pg-cluster.sh bin | start DIR PORT | start-any DIR | stop DIR (see the top of $0)"
    case "${1:-}:$#" in
        bin:1) pg_cluster_bin ;;
        start:3) pg_cluster_start "$2" "$3" ;;
        start-any:2) pg_cluster_start_any "$2" ;;
        stop:2) pg_cluster_stop "$2" ;;
        -h:* | --help:*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0" ;;
        *) echo "pg-cluster: bad arguments '$*'; $usage" >&2; exit 2 ;;
    esac
fi
