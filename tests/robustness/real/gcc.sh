#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gcc compiling a generated 200-function file at -O2: prints a digest of
# the assembly (a corrupted compiler state changes it) and the output of
# the linked program.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
  echo '#include <stdio.h>'
  for i in $(seq 1 200); do
    echo "static unsigned long f$i(unsigned long x) { unsigned long a[$((i % 13 + 3))];"
    echo "  for (unsigned k = 0; k < sizeof a / sizeof a[0]; k++) a[k] = x * $i + k;"
    echo "  switch (x % 5) { case 0: return a[1] ^ $i; case 1: return a[0] + x / $((i % 7 + 1));"
    echo "  case 2: return (a[2] << 3) - $i; default: return a[x % (sizeof a / sizeof a[0])] * 3; } }"
  done
  echo 'int main(void) { unsigned long s = 0;'
  for i in $(seq 1 200); do echo "  s = s * 31 + f$i(s + $i);"; done
  echo '  printf("%lu\n", s); return 0; }'
} > "$dir/gen.c"
gcc -O2 -S -o "$dir/gen.s" "$dir/gen.c"
echo "assembly lines $(wc -l < "$dir/gen.s"), sha256 $(grep -v '\.ident' "$dir/gen.s" | sha256sum | cut -c1-16)"
gcc -O2 -o "$dir/gen" "$dir/gen.c"
"$dir/gen"
