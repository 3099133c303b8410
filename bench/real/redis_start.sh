# SPDX-License-Identifier: MIT
# Sourced by the redis scripts of bench/ and tests/.
# redis_start PRELOAD DIR [ARGS...]: starts redis-server on 127.0.0.1 with
# PRELOAD preloaded, its log in DIR/log, and sets `port` and `server` (its
# pid); returns 1 if no server came up.  Ports are below the kernel's
# ephemeral range (32768 and up), where clients of an earlier run may still
# hold the one picked; a server that finds its port taken exits, and the
# next port is tried.  Readiness is read from the server's own log, so a
# reply from another test's server is never mistaken for ours.
redis_start() {
    local preload=$1 dir=$2 try
    shift 2
    for try in 0 1 2 3 4 5 6 7; do
        port=$((20000 + (RANDOM * 7 + try * 977) % 12000))
        rm -f "$dir/log"
        LD_PRELOAD=$preload redis-server --port "$port" --bind 127.0.0.1 --save '' \
            --appendonly no --dir "$dir" --logfile "$dir/log" "$@" &
        server=$!
        for _ in $(seq 200); do
            grep -qs "Ready to accept connections" "$dir/log" && return 0
            kill -0 "$server" 2>/dev/null || break
            sleep 0.05
        done
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=
    done
    return 1
}
