#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fast library is the checked one without its checks: its malloc and
# free fast paths (scripts/fastpath_count.sh) are each shorter.
# Usage: fast_paths.sh CHECKED_LIBRARY FAST_LIBRARY OBJDUMP
set -eu
checked=$1 fast=$2 objdump=$3
count() { bash "$(dirname "$0")/../scripts/fastpath_count.sh" "$1" "$objdump" | awk -v f="$2:" '$2 == f { print $3 }'; }
status=0
for fn in malloc free; do
    c=$(count "$checked" "$fn") f=$(count "$fast" "$fn")
    echo "$fn: checked $c instructions, fast $f"
    if ! [ "$f" -lt "$c" ] 2>/dev/null; then
        echo "fast $fn is not shorter than the checked one" >&2
        status=1
    fi
done
exit $status
