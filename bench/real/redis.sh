#!/usr/bin/env bash
# redis-server under the allocator (BENCH_PRELOAD), driven by
# redis-benchmark on 127.0.0.1 (not preloaded).  Debian links redis-server
# with jemalloc, so "no allocator" preloads libc itself to get glibc's
# malloc.  The check: a counter incremented N times reads N, a list pushed
# N times is N long, and a large value reads back intact.
# Usage: redis.sh REQUESTS
set -euo pipefail
n=${1:-100000}
port=$((20000 + $$ % 20000))
preload=${BENCH_PRELOAD:-$(ldconfig -p | awk '/libc\.so\.6 .*x86-64/ {print $NF; exit}')}
dir=$(mktemp -d)
LD_PRELOAD=$preload redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/log" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$dir"' EXIT
cli() { redis-cli -p "$port" "$@"; }
for _ in $(seq 100); do
    [ "$(cli ping 2>/dev/null)" = PONG ] && break
    sleep 0.05
done

start=$(date +%s%N)
redis-benchmark -p "$port" -q -n "$n" -r 100000 -d 256 -t set,get,sadd,hset,lpush,lpop > /dev/null
redis-benchmark -p "$port" -q -n "$n" -t incr,lpush > /dev/null
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
