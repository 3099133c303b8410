#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Counts the instructions of malloc's and free's fast paths in built
# libraries: from the function's entry to its first return, the path a
# small request or free takes when the thread's list serves it.
# Usage: fastpath_count.sh LIBRARY [OBJDUMP] ...  (pairs of a library and
# the objdump for its architecture; objdump by default)
set -eu
while [ $# -gt 0 ]; do
  lib=$1 objdump=${2:-objdump}
  shift $(( $# > 1 ? 2 : 1 ))
  for fn in malloc free; do
    start=$(readelf -W --dyn-syms "$lib" | awk -v f="$fn" '$8 == f { print $2; exit }')
    n=$("$objdump" -d --no-show-raw-insn --start-address=0x"$start" "$lib" |
        awk '$1 ~ /^[0-9a-f]+:$/ { n++; if ($2 == "ret" || $2 == "retq") { print n; exit } }')
    printf '%s %s: %s instructions to the first return\n' "$(basename "$lib")" "$fn" "$n"
  done
done
