#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run narrowed by a knob must write its report under bench/subset/ and
# leave the full run's report alone.  Usage: report_test.sh PYTHON BUILD
set -euo pipefail
python=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bench"
ln -s "$build/bench/microbench" "$tmp/bench/microbench"
echo "the full run's report" > "$tmp/bench/results.md"
"$python" "$(dirname "$0")/harness.py" --build "$tmp" --quick --only microbench --allocators glibc >/dev/null
[ "$(cat "$tmp/bench/results.md")" = "the full run's report" ] || { echo "FAILED: the full report was overwritten"; exit 1; }
grep -q "microbench/64" "$tmp/bench/subset/results.md" || { echo "FAILED: no subset report"; exit 1; }
grep -q "^microbench/64,microbench" "$tmp/bench/subset/results.csv" || { echo "FAILED: no subset csv"; exit 1; }
echo "subset report ok"
