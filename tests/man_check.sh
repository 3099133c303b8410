#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages render without a warning: groff with every warning on, and
# man -l as a reader sees them, and each names the version primalloc.h
# states.  Usage: man_check.sh HEADER PAGE...
set -euo pipefail
header=$1
shift
version=$(sed -n 's/^#define PRIMALLOC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$header" | paste -sd.)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for page in "$@"; do
  grep -q "^\.TH .*\"primalloc $version\"" "$page" || { echo "$page: .TH does not name primalloc $version"; exit 1; }
  warnings=$(groff -ww -man -z "$page" 2>&1)
  [ -z "$warnings" ] || { echo "$page: groff: $warnings"; exit 1; }
  text=$(MANWIDTH=80 man -l "$page" 2>"$err" </dev/null)
  [ ! -s "$err" ] || { echo "$page: man -l: $(cat "$err")"; exit 1; }
  for section in NAME DESCRIPTION "SEE ALSO"; do
    grep -q "^$section" <<<"$text" || { echo "$page: no $section section"; exit 1; }
  done
done
echo "man pages ok: $*"
