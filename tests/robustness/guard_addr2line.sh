#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The places a guard-page report names can be looked up: each is a file
# and an address in it, and `addr2line -e FILE ADDRESS` gives the source
# line that allocated, freed, and touched the object after its free.
# Usage: guard_addr2line.sh ROBUST_MEMORY_ERRORS
set -u
prog=$1
out=$(PRIMALLOC_GUARD_RATE=1 "$prog" guard_use_after_free 2>&1)
status=0
# $1: the words before the place; $2: what its source line must hold.
expect() {
    local place file addr where src num text
    place=$(grep -o "$1 /[^ ]*+0x[0-9a-f]*" <<<"$out" | head -1)
    place=${place#"$1 "}
    file=${place%+0x*} addr=0x${place##*+0x}
    if [ -z "$place" ]; then
        echo "no place after \"$1\" in: $out"
        status=1
        return
    fi
    where=$(addr2line -e "$file" "$addr")
    src=${where%%:*} num=${where#*:}
    num=${num%% *}
    text=$(sed -n "${num}p" "$src" 2>/dev/null)
    if [[ $text != *"$2"* ]]; then
        echo "\"$1\" $place: addr2line says $where: \"$text\", not a line with \"$2\""
        status=1
    else
        echo "$1 $place: $where: $text"
    fi
}
expect "allocated from" "malloc("
expect "freed from" "free(p)"
expect "written at" "((volatile char *)p)"
exit $status
