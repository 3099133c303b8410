#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcheck's verdict on a program is the same with libprimalloc_valgrind.so
# preloaded as with memcheck's own malloc: EXPECTED errors, of the same
# kinds, and --error-exitcode's status when there are any.  By default
# memcheck would replace any library's malloc with its own;
# nouserintercepts stops that for the first run.
# Usage: memcheck_verdict.sh LIBRARY EXPECTED PROGRAM [ARGS...]
set -u
lib=$1 expected=$2
shift 2
status=0
# The errors' kinds and what memcheck says of their addresses, without
# process ids and addresses.
kinds() {
    sed -nE 's/^==[0-9]+== +((Invalid|Conditional|Use of uninit|Syscall param|Mismatched|Source and dest|Address 0x).*)/\1/p' |
        sed -E 's/0x[0-9A-Fa-f]+/ADDR/g' | sort | uniq -c
}
verdict() {
    local name=$1
    shift
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    local want=0
    [ "$expected" -gt 0 ] && want=99
    if ! grep -q "ERROR SUMMARY: $expected errors" <<<"$out" || [ $rc -ne $want ]; then
        echo "$name: not $expected errors with exit status $want (status $rc)"
        printf '%s\n' "$out"
        status=1
    fi
    kinds <<<"$out" >"$tmp/$name"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict primalloc env LD_PRELOAD="$lib" valgrind --error-exitcode=99 \
    --soname-synonyms=somalloc=nouserintercepts "$@"
verdict memcheck valgrind --error-exitcode=99 "$@"
if ! diff -u "$tmp/memcheck" "$tmp/primalloc"; then
    echo "the errors differ: (-) with memcheck's own malloc, (+) with primalloc's"
    status=1
fi
exit $status
