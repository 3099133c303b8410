#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage: redis.sh LIBRARY
# redis-server with LIBRARY preloaded on 127.0.0.1, no persistence;
# redis-benchmark sends a bounded number of requests with values up to
# 64 KiB; then values of every size category are written and read back
# byte for byte.  The server is always shut down, and must be found using
# LIBRARY (in its maps) and still answering at the end.
set -euo pipefail
lib=$1
dir=$(mktemp -d)
server=
stop() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$dir"
}
trap stop EXIT
. "$(dirname "$0")/../../../bench/real/redis_start.sh"
redis_start "$lib" "$dir" --daemonize no || { echo "server did not start"; cat "$dir/log"; exit 1; }
cli=(redis-cli -h 127.0.0.1 -p "$port")
grep -q "$(basename "$lib")" "/proc/$server/maps" || { echo "server is not using $lib"; exit 1; }

for d in 16 1000 20000; do
  timeout 120 redis-benchmark -h 127.0.0.1 -p "$port" -n 5000 -c 10 -r 5000 -d "$d" -q \
    -t set,get,lpush,lpop,sadd,hset,mset | tr '\r' '\n' | grep -E '^[A-Z]' | sed 's/:.*//' |
    sort -u | tr '\n' ' '
  echo "(value size $d)"
done

# Values of every category, read back whole.
for n in 10 200 5000 100000 3000000; do
  value=$(head -c "$n" /dev/zero | tr '\0' 'x')$n
  "${cli[@]}" -x set "k$n" <<<"$value" >/dev/null
  got=$("${cli[@]}" get "k$n")
  [ "$got" = "$value" ] || { echo "value of $n bytes came back wrong"; exit 1; }
done
"${cli[@]}" dbsize
"${cli[@]}" info memory | grep -q used_memory: || { echo "no INFO from the server"; exit 1; }
kill -0 "$server" || { echo "server died"; exit 1; }
echo "redis: benchmark and round trips ok"
