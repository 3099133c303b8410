#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage: fuzz/run.sh BUILDDIR SECONDS [--check]
# Runs the libFuzzer harness for SECONDS over the corpus in fuzz/corpus.
# By hand (make fuzz) it first builds the harness, and afterwards merges
# the inputs that found new coverage into fuzz/corpus, to be committed.
# With --check (the ctest run) it builds nothing and leaves the corpus
# alone.  A crash leaves its input in BUILDDIR/fuzz/ and fails the run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath -m "$1")
seconds=$2
check=${3:-}
bin=$build/fuzz/fuzz_alloc
if [ "$check" != --check ]; then
  cmake -S "$here/.." -B "$build" >/dev/null
  cmake --build "$build" --target fuzz_alloc
fi
[ -x "$bin" ] || { echo "no fuzzer at $bin (is clang installed?)"; exit 1; }
new=$build/fuzz/new
rm -rf "$new"
mkdir -p "$new"
# New inputs go to the first directory only; the corpus is read.  The RSS
# limit leaves room for 64 blocks of up to 6 MiB under ASan.  One
# allocation in 16 gets guard pages, so that guarded objects go through
# every call the inputs make and the guard records meet their validator.
log=$build/fuzz/log
status=0
PRIMALLOC_GUARD_RATE=16 "$bin" -max_total_time="$seconds" -max_len=2048 -timeout=60 -rss_limit_mb=3072 \
  -print_final_stats=1 -artifact_prefix="$build/fuzz/" "$new" "$here/corpus" >"$log" 2>&1 ||
  status=$?
# Everything but the progress lines, then the last of those.
grep -vE '^#[0-9]+' "$log" | tail -n 60
grep -E '^#[0-9]+' "$log" | tail -n 1
[ "$status" -eq 0 ] || { echo "fuzzer failed (status $status), log in $log"; exit "$status"; }
if [ "$check" != --check ]; then
  "$bin" -merge=1 "$here/corpus" "$new" 2>&1 | tail -1
  echo "corpus: $(ls "$here/corpus" | wc -l) inputs in $here/corpus"
fi
