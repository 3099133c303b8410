#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# redis-server under the allocator (BENCH_PRELOAD), driven by
# redis-benchmark on 127.0.0.1 (not preloaded).  Debian links redis-server
# with jemalloc, so "no allocator" preloads libc itself to get glibc's
# malloc.  The check: a counter incremented N times reads N, a list pushed
# N times is N long, and a large value reads back intact.
# Usage: redis.sh REQUESTS
set -euo pipefail
n=${1:-100000}
# awk reads all of ldconfig's output: quitting at the first match could
# kill ldconfig by SIGPIPE, which pipefail turned into the script's exit.
preload=${BENCH_PRELOAD:-$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ && !found {print $NF; found = 1}')}
dir=$(mktemp -d)
server=
trap '[ -z "$server" ] || kill $server 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
gone() {
    echo "check FAILED: redis-server $1; its log ends:"
    tail -n 20 "$dir/log"
    exit 1
}
. "$(dirname "$0")/redis_start.sh"
redis_start "$preload" "$dir" || gone "did not start"
cli() { redis-cli -p "$port" "$@"; }
# redis-benchmark retries a dead server forever: each load is bounded in
# time, and a server that is gone is reported with its log.
load() {
    timeout 120 redis-benchmark -p "$port" -q -n "$n" "$@" > /dev/null || gone "stopped answering"
    kill -0 $server 2>/dev/null || gone "died"
}

start=$(date +%s%N)
load -r 100000 -d 256 -t set,get,sadd,hset,lpush,lpop
load -t incr,lpush
echo "metric requests_per_s $((8 * n * 1000000000 / ($(date +%s%N) - start))) 1/s"

head -c 300000 /dev/urandom | base64 -w0 > "$dir/big"
cli -x set big < "$dir/big" > /dev/null
echo >> "$dir/big"
problems=""
[ "$(cli get counter:__rand_int__)" = "$n" ] || problems+=" counter"
[ "$(cli llen mylist)" = "$n" ] || problems+=" list"
cli get big | cmp -s - "$dir/big" || problems+=" big-value"
cli shutdown nosave > /dev/null 2>&1 || true
wait $server || problems+=" server-exit"
if [ -z "$problems" ]; then
    echo "check ok"
else
    echo "check FAILED:$problems"
    exit 1
fi
