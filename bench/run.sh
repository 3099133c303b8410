#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench` ends here: runs every workload under every allocator and
# writes BUILD/bench/results.{csv,md} and plots.  Usage: bench/run.sh BUILD
# Knobs (environment): QUICK=1, ONLY=, ALLOCATORS=, THREADS=, RUNS=;
# see bench/README.md.  Debian's python3: the one on PATH may be pyenv's.
set -euo pipefail
build=${1:-build}
if [ ! -e "$build/libprimalloc.so" ]; then
    echo "note: $build/libprimalloc.so was not built; primalloc is reported MISSING"
fi
exec /usr/bin/python3 "$(dirname "$0")/harness.py" --build "$build"
