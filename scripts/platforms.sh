#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The suite on the other platforms (README, "Platforms"): for each, a
# build with its toolchain file under BUILD/platforms/NAME, then its ctest
# run (aarch64 and riscv64 under qemu-user), then the tests it cannot run,
# each with the reason.  Usage: platforms.sh BUILD [NAME...]
set -euo pipefail
build=$1
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(musl aarch64-linux-gnu riscv64-linux-gnu)
jobs=$(nproc)
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
for name in "${names[@]}"; do
  dir=$build/platforms/$name
  echo "== $name"
  cmake -S "$root" -B "$dir" --toolchain "$root/cmake/cross/$name.cmake" -DCMAKE_BUILD_TYPE=Release \
    -DPM_BENCH=OFF >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900) || status=1
  echo "-- $name: not run here:"
  sed 's/^/   /' "$dir/unavailable.txt"
done
exit $status
