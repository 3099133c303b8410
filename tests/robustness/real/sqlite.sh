#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sqlite3 on an in-memory database: 30000 rows of text and blobs of mixed
# sizes, an index, a join, aggregates and a VACUUM-like rebuild; prints
# results whose every digit depends on the data surviving.
set -euo pipefail
sqlite3 :memory: <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t SELECT i, printf('key-%08d-%s', i * 7919 % 30011, substr(hex(i * i), 1, i % 17)),
  zeroblob(i * 37 % 5000) || CAST(i AS BLOB) FROM n;
CREATE INDEX tk ON t(k);
SELECT count(*), sum(length(v)), max(k), min(k) FROM t;
SELECT k, length(v) FROM t WHERE k BETWEEN 'key-00010000' AND 'key-00010100' ORDER BY k LIMIT 5;
CREATE TABLE u AS SELECT id % 97 AS g, group_concat(k, ',') AS ks FROM t GROUP BY id % 97;
SELECT g, length(ks), substr(ks, 1, 40) FROM u ORDER BY length(ks) DESC LIMIT 3;
SELECT count(*), sum(length(a.v) + length(b.ks)) FROM t a JOIN u b ON a.id % 97 = b.g;
DELETE FROM t WHERE id % 3 = 0;
UPDATE t SET v = zeroblob(id % 9000) || x'01' WHERE id % 5 = 1;
SELECT count(*), sum(length(v)), total(id) FROM t;
SQL
