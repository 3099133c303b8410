#!/usr/bin/env bash
# Usage: redis.sh LIBRARY PORT
# redis-server with LIBRARY preloaded on 127.0.0.1:PORT, no persistence;
# redis-benchmark sends a bounded number of requests with values up to
# 64 KiB; then values of every size category are written and read back
# byte for byte.  The server is always shut down, and must be found using
# LIBRARY (in its maps) and still answering at the end.
set -euo pipefail
lib=$1
port=$2
dir=$(mktemp -d)
cli=(redis-cli -h 127.0.0.1 -p "$port")
stop() {
  "${cli[@]}" shutdown nosave >/dev/null 2>&1 || true
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap stop EXIT
LD_PRELOAD=$lib redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
  --dir "$dir" --daemonize no --logfile "$dir/log" &
pid=$!
for _ in $(seq 100); do
  "${cli[@]}" ping 2>/dev/null | grep -q PONG && break
  sleep 0.1
done
"${cli[@]}" ping | grep -q PONG || { echo "server did not start"; cat "$dir/log"; exit 1; }
grep -q "$(basename "$lib")" "/proc/$pid/maps" || { echo "server is not using $lib"; exit 1; }

for d in 16 1000 20000; do
  redis-benchmark -h 127.0.0.1 -p "$port" -n 5000 -c 10 -r 5000 -d "$d" -q \
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
kill -0 "$pid" || { echo "server died"; exit 1; }
echo "redis: benchmark and round trips ok"
