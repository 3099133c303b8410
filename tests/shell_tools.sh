#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Everyday programs on generated data: sort, awk, sed, perl, tar and gzip,
# each printing a digest.  Run through preload_compare.sh, every one of
# them starts with the allocator under test in place from its loader's
# first allocation.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
seq 1 200000 | awk '{ printf "%08x %d\n", ($1 * 2654435761) % 4294967296, $1 }' > data
sort data | md5sum
sort -k2,2nr data | awk "NR <= 3"
awk '{ c[substr($1, 1, 3)]++ } END { for (k in c) n++; print n, c["abc"] + 0 }' data
sed -e 's/\([0-9a-f]\)\1/<&>/g' data | grep -c '<'
perl -e 'my %h; for my $i (1 .. 300000) { $h{"k$i"} = [$i, "v" x ($i % 40)] }
         delete $h{"k$_"} for grep { $_ % 3 } 1 .. 300000;
         my $s = 0; $s += $_->[0] + length $_->[1] for values %h;
         my @w = sort map { sprintf "%x", $_ * 7919 % 1000003 } 1 .. 200000;
         print scalar(keys %h), " $s $w[0] $w[-1]\n"'
mkdir tree
split -l 5000 data tree/part.
tar -cf - tree | gzip -n -6 | gzip -dc | tar -tvf - --numeric-owner | awk '{ s += $3 } END { print NR, s }'
LD_BIND_NOW=1 env true && echo "bind now ok"
