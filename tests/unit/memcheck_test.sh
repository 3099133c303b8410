#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcheck reports a planted leak and a planted read of freed memory in
# blocks of libprimalloc_valgrind.so, and nothing else.  By default memcheck
# would replace any library's malloc with its own; nouserintercepts stops that.
# Usage: memcheck_test.sh LIBRARY PROGRAM
set -u
lib=$1 prog=$2
out=$(LD_PRELOAD=$lib valgrind --soname-synonyms=somalloc=nouserintercepts --leak-check=full --show-leak-kinds=definite "$prog" 2>&1)
status=0
expect() {
    if ! grep -qE "$1" <<<"$out"; then
        echo "memcheck output lacks: $1"
        status=1
    fi
}
expect "Invalid read of size 4"
expect "40 bytes inside a block of size 400 free'd"
expect "at 0x[0-9A-F]+: free \\((valgrind_api.c|in .*libprimalloc_valgrind.so)"
expect "4,321 bytes in 1 blocks are definitely lost"
expect "at 0x[0-9A-F]+: malloc \\((valgrind_api.c|in .*libprimalloc_valgrind.so)"
expect "ERROR SUMMARY: 2 errors from 2 contexts"
[ $status -eq 0 ] || printf '%s\n' "$out"
exit $status
