#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sqlite3 on a generated SQL load: inserts rows with text of varying
# length, indexes, updates, deletes, joins and groups them.  awk writes the
# SQL and, alongside, the answer the final queries must give.  Only sqlite3
# runs under the allocator (BENCH_PRELOAD).  Usage: sqlite_load.sh ROWS
# [LONGEST], the longest text of a row (200 by default).
set -euo pipefail
rows=${1:-100000} longest=${2:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk -v n="$rows" -v longest="$longest" -v sql="$dir/load.sql" -v want="$dir/want" 'BEGIN {
    print "BEGIN;" > sql
    print "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);" > sql
    for (i = 1; i <= n; i++) {
        k = (i * 7919) % 1000
        len = 1 + (i * 31) % longest
        printf "INSERT INTO t VALUES(%d,%d,printf(\"%%.%dc\",\"x\"));\n", i, k, len > sql
        if (i % 3 == 0)
            continue
        count++; ksum += k; lsum += len; distinct[k] = 1
        if ((i - 1) % 3 != 0 && i > 1 && k > prev) rising++
        prev = k
    }
    for (k in distinct)
        groups++
    print "CREATE INDEX tk ON t(k);" > sql
    print "DELETE FROM t WHERE id % 3 = 0;" > sql
    print "UPDATE t SET v = v || v WHERE k < 100;" > sql
    print "COMMIT;" > sql
    print "SELECT count(*), sum(k), sum(length(v)) - (SELECT sum(length(v)) / 2 FROM t WHERE k < 100) FROM t;" > sql
    print "SELECT count(*) FROM (SELECT k, count(*) FROM t GROUP BY k);" > sql
    print "SELECT count(*) FROM t a JOIN t b ON a.id = b.id + 1 WHERE a.k > b.k;" > sql
    printf "%d|%d|%d\n%d\n%d\n", count, ksum, lsum, groups, rising > want
}'
start=$(date +%s%N)
LD_PRELOAD=${BENCH_PRELOAD:-} sqlite3 :memory: < "$dir/load.sql" > "$dir/got"
echo "metric rows_per_s $((rows * 1000000000 / ($(date +%s%N) - start))) 1/s"
if cmp -s "$dir/got" "$dir/want"; then
    echo "check ok"
else
    echo "check FAILED: got $(tr '\n' ' ' < "$dir/got"), want $(tr '\n' ' ' < "$dir/want")"
    exit 1
fi
