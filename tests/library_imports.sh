#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage: library_imports.sh LIBRARY [OBJDUMP]
# What the shared library needs from elsewhere must be safe to use during
# the loader's and libc's first allocations: thread-local state in the
# static TLS block (initial-exec: no __tls_get_addr, which may allocate),
# and no dynamic lookups or stdio, which take locks or allocate and would
# re-enter the allocator.
set -u
lib=$1 objdump=${2:-objdump}
fail=0
# Every thread-local access is a fixed offset from the thread pointer
# (TPREL relocations); the dynamic models' relocations (DTPMOD, DTPOFF,
# TLSDESC) would call into the loader.
dynamic_tls=$(readelf -rW "$lib" | grep -E 'R_[A-Z0-9_]*(DTPMOD|DTPOFF|TLSDESC|TLS_DTP)' | head -3)
[ -z "$dynamic_tls" ] ||
  { echo "$lib: dynamic TLS relocations (thread state not initial-exec TLS):"; echo "$dynamic_tls"; fail=1; }
imports=$(readelf -W --dyn-syms "$lib" | awk '$7 == "UND" { sub(/@.*/, "", $8); print $8 }')
[ -n "$imports" ] || { echo "$lib: could not read its imports"; exit 1; }
for sym in __tls_get_addr dlsym dlvsym dlopen dladdr fopen fdopen printf fprintf vfprintf \
           puts fputs fflush setvbuf perror; do
  if grep -qx "$sym" <<<"$imports"; then
    echo "$lib imports $sym"
    fail=1
  fi
done
# fwrite has one caller: malloc_info's sink, which writes to the FILE the
# program hands it, with no lock of the allocator's held.
callers=$("$objdump" -d "$lib" | awk '/^[0-9a-f]+ </ { fn = $2 } /<fwrite@/ && fn !~ /@plt>:$/ { print fn }' | sort -u)
if [ -n "$callers" ] && [ "$callers" != "<to_file>:" ]; then
  echo "$lib calls fwrite from:" $callers
  fail=1
fi
exit $fail
