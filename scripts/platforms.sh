#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The suite on the other platforms (README, "Platforms"): for each, a
# build under BUILD/platforms/NAME, its ctest run (aarch64 and riscv64
# under qemu-user), then the tests it cannot run, each with the reason.
# Each repeats checks the native suite runs in full, so its tests that
# repeat a check take fewer rounds (PM_SHORT_RUNS, CMakeLists.txt).
#   musl, aarch64-linux-gnu, riscv64-linux-gnu: the whole suite, built
#     with cmake/cross/NAME.cmake;
#   page16k, page64k: the unit, conformance and memory-error tests of a
#     build that takes the kernel's page to be 16 or 64 KiB;
#   debug: the whole suite once more, every library built with the
#     assertions and the expensive tier (CMAKE_BUILD_TYPE=Debug): each
#     program once, since every variant's library has the same checks,
#     without the fuzzer (the native build's is built so already) and the
#     installation (which installs release libraries).
# Usage: platforms.sh BUILD [NAME...]
set -euo pipefail
build=$1
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(debug musl aarch64-linux-gnu riscv64-linux-gnu page16k page64k)
jobs=$(nproc)
root=$(cd "$(dirname "$0")/.." && pwd)
page_tests='^(unit_|api_|misuse|early_init|robust\.bad_input|robust\.memory_error)'
# A one-page underflow of a 4 KiB kernel page stays inside a larger page
# taken for the kernel's, where the free finds it instead of a fault.
# With a page that large, a chunk's first folio shares its page with the
# folio records, so the byte before a fresh bin's first object is mapped.
# The fast library's tests, the same code as the native build's, are
# left to it.
page_skip='guard_underflow_1_page|medium_underflow_1_unmapped|\.fast$'
page_targets='^(unit_|api_|misuse|early_init|robust_bad_input|robust_memory_errors)'
variants='\.(static|debug|debug_std|ubsan|tsan|fast|valgrind)$'
debug_skip="$variants|^fuzz\.|^install\."
debug_targets='\.(release|plain)$|^(unit_|robust_|memcheck_)|^(primalloc|gen_sizeclasses|profile_sites|static_link)$'
status=0
for name in "${names[@]}"; do
  # The tools a platform's build and run take, which install-deps.sh may
  # not have been able to install.
  case $name in
    musl) tools=(musl-gcc) ;;
    aarch64-linux-gnu) tools=(aarch64-linux-gnu-gcc qemu-aarch64) ;;
    riscv64-linux-gnu) tools=(riscv64-linux-gnu-gcc qemu-riscv64) ;;
    *) tools=() ;;
  esac
  for tool in "${tools[@]}"; do
    if ! command -v "$tool" >/dev/null; then
      echo "== $name: not run: $tool is not installed"
      continue 2
    fi
  done
  dir=$build/platforms/$name
  config=(-DCMAKE_BUILD_TYPE=Release -DPM_BENCH=OFF -DPM_SHORT_RUNS=ON)
  select=()
  case $name in
    page16k) config+=(-DPM_TEST_KERNEL_PAGE=16384) ;;
    page64k) config+=(-DPM_TEST_KERNEL_PAGE=65536) ;;
    debug) config=(-DCMAKE_BUILD_TYPE=Debug -DPM_BENCH=OFF) ;;
    *) config+=(--toolchain "$root/cmake/cross/$name.cmake") ;;
  esac
  echo "== $name"
  cmake -S "$root" -B "$dir" "${config[@]}" >/dev/null
  targets=$(cmake --build "$dir" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
  if [[ $name == page* ]]; then
    targets=$(grep -E "$page_targets" <<<"$targets" | grep -vE '\.fast$')
    # shellcheck disable=SC2086
    cmake --build "$dir" -j"$jobs" --target $targets >/dev/null
    select=(-R "$page_tests" -E "$page_skip")
  elif [ "$name" = debug ]; then
    targets=$(grep -E "$debug_targets" <<<"$targets")
    # shellcheck disable=SC2086
    cmake --build "$dir" -j"$jobs" --target $targets >/dev/null
    select=(-E "$debug_skip")
  else
    cmake --build "$dir" -j"$jobs" >/dev/null
  fi
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 "${select[@]}") || status=1
  if [[ $name != page* ]]; then
    echo "-- $name: not run here:"
    sed 's/^/   /' "$dir/unavailable.txt"
  fi
done
exit $status
