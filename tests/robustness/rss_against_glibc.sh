#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage: rss_against_glibc.sh LIBRARY FACTOR COMMAND [ARGS...]
# COMMAND prints one figure, its resident set in KiB at the moment it
# measures.  Runs it with the system allocator, then with LIBRARY in
# LD_PRELOAD, and requires LIBRARY's figure to be at most FACTOR times
# glibc's.
set -u
lib=$1 factor=$2
shift 2
[ -f "$lib" ] || { echo "no library at $lib"; exit 1; }
glibc=$("$@") || { echo "run with glibc failed: $*"; exit 1; }
ours=$(LD_PRELOAD=$lib "$@") || { echo "run with $lib failed: $*"; exit 1; }
echo "resident KiB: glibc $glibc, $(basename "$lib") $ours (bound: $factor x glibc)"
[[ $glibc =~ ^[0-9]+$ && $ours =~ ^[0-9]+$ ]] || { echo "not a figure"; exit 1; }
(( ours <= factor * glibc ))
