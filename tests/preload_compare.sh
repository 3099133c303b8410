#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage: preload_compare.sh LIBRARY COMMAND [ARGS...]
# Runs COMMAND with the system allocator, then with LIBRARY in LD_PRELOAD
# (inherited by every program COMMAND starts), and requires both runs to
# succeed with the same output, stderr included: a loader complaint about
# the library, a crash or a corrupted result all show up as a difference.
set -u
lib=$1
shift
[ -f "$lib" ] || { echo "no library at $lib"; exit 1; }
ref=$("$@" 2>&1) || { echo "reference run failed ($?): $*"; echo "$ref"; exit 1; }
out=$(LD_PRELOAD=$lib "$@" 2>&1) || { echo "run with $lib failed ($?): $*"; echo "$out"; exit 1; }
if [ "$ref" != "$out" ]; then
  echo "output differs with $lib preloaded:"
  diff <(printf '%s\n' "$ref") <(printf '%s\n' "$out") | head -40
  exit 1
fi
[ -n "$out" ] || { echo "no output from $*"; exit 1; }
printf '%s\n' "$out" | tail -5
