#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The heap profile read by google-pprof: profile_sites (argument 1) runs
# with the profile on and dumps by API call, by signal and at exit; in
# each dump keep_most and keep_rest must hold their live bytes within 10%
# and churn, which frees all it allocates, must not appear.
set -euo pipefail
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$(PRIMALLOC_PROF=1 PRIMALLOC_PROF_RATE=1024 PRIMALLOC_PROF_FILE="$dir/prof" \
      PRIMALLOC_PROF_SIGNAL=SIGUSR2 "$exe" "$dir/api.heap")
read -r _ most _ rest <<<"$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
dumps=("$dir/api.heap" "$dir"/prof.*.0.heap "$dir"/prof.*.1.heap)
[ ${#dumps[@]} -eq 3 ] && [ -f "${dumps[1]}" ] && [ -f "${dumps[2]}" ] || fail "dumps missing: $(ls "$dir")"
for dump in "${dumps[@]}"; do
  text=$(google-pprof --text --show_bytes "$exe" "$dump" 2>/dev/null)
  echo "== $dump"; head -6 <<<"$text"
  # Columns: flat flat% sum% cum cum% function.
  for site in "keep_most $most" "keep_rest $rest"; do
    read -r name want <<<"$site"
    got=$(awk -v f="$name" '$6 ~ "^" f "([.]|$)" {print $1}' <<<"$text")
    [ -n "$got" ] || fail "$name missing from $dump"
    awk -v g="$got" -v w="$want" 'BEGIN { exit !(g > 0.9 * w && g < 1.1 * w) }' ||
      fail "$name: $got bytes, $want live"
  done
  grep -q churn <<<"$text" && fail "churn, which freed all, appears in $dump"
  folded="${dump%.heap}.folded"; [ "$dump" = "$dir/api.heap" ] && folded="$dump.folded"
  grep -q ';keep_most [0-9]*$' "$folded" || fail "keep_most missing from $folded"
  grep -q churn "$folded" && fail "churn appears in $folded"
done
echo ok
