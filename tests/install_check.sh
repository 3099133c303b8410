#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build into a staging directory (DESTDIR, prefix /usr/local)
# and builds tests/install/consumer.c against the staged tree twice: with
# `pkg-config --cflags --libs primalloc` (and primalloc-fast), and as a
# CMake project using find_package(primalloc), shared and static, each
# library of both; then embedded in a project
# that builds primalloc itself; then uninstalls.  Each consumer must run,
# say "consumer ok", and (shared) hold pm_malloc in the staged library.
# Usage: install_check.sh BUILD_DIR C_COMPILER
set -euo pipefail
build=$1 cc=$2
src=$(cd "$(dirname "$0")/install" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DESTDIR=$tmp/stage cmake --install "$build" --prefix /usr/local >/dev/null
prefix=$tmp/stage/usr/local
fail() { echo "install_check: $*" >&2; exit 1; }

pc=$(find "$prefix" -name primalloc.pc)
[ -n "$pc" ] || fail "no primalloc.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
for f in include/primalloc.h share/man/man3/primalloc.3 share/man/man7/primalloc.7; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
soname=$(readelf -d "$libdir/libprimalloc.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $soname == libprimalloc.so.[0-9]* && -e $libdir/$soname && -f $libdir/libprimalloc.a ]] ||
  fail "libraries: soname '$soname'; $(ls "$libdir")"
fast=$(readelf -d "$libdir/libprimalloc-fast.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ $fast == libprimalloc-fast.so.[0-9]* && -e $libdir/$fast && -f $libdir/libprimalloc-fast.a ]] ||
  fail "fast libraries: soname '$fast'; $(ls "$libdir")"

# $1: the program; $2: where pm_malloc must be ("" for the program itself).
run_consumer() {
  local out
  out=$(LD_LIBRARY_PATH=$libdir "$1") || fail "$1 failed: $out"
  [[ $out == "consumer ok "* ]] || fail "$1 said: $out"
  local holder=${out#consumer ok }
  [ "$(realpath "$holder")" = "$(realpath "${2:-$1}")" ] || fail "$1: pm_malloc is in $holder, not ${2:-$1}"
}

for lib in primalloc primalloc-fast; do
  flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs $lib) ||
    fail "pkg-config does not know $lib"
  # shellcheck disable=SC2086
  "$cc" -o "$tmp/consumer_$lib" "$src/consumer.c" $flags -ldl
  run_consumer "$tmp/consumer_$lib" "$libdir/lib$lib.so.${soname##*.so.}"
done

cmake -S "$src" -B "$tmp/cmake" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null ||
  fail "find_package(primalloc) failed"
cmake --build "$tmp/cmake" -j"$(nproc)" >/dev/null || fail "the find_package consumer does not build"
run_consumer "$tmp/cmake/consumer_shared" "$libdir/$soname"
run_consumer "$tmp/cmake/consumer_static"
run_consumer "$tmp/cmake/consumer_fast" "$libdir/$fast"
run_consumer "$tmp/cmake/consumer_fast_static"
# Embedded: the consumer project builds primalloc from this source tree;
# no test of primalloc's may build inside it.
root=$(cd "$src/../.." && pwd)
for way in subdirectory fetch; do
  fetch=OFF
  [ $way = subdirectory ] || fetch=ON
  cmake -S "$src/embed" -B "$tmp/$way" -DCMAKE_C_COMPILER="$cc" -DPM_SOURCE="$root" -DPM_FETCH=$fetch \
    -DFETCHCONTENT_SOURCE_DIR_PRIMALLOC="$root" --no-warn-unused-cli >/dev/null ||
    fail "the $way consumer does not configure"
  cmake --build "$tmp/$way" -j"$(nproc)" --target consumer_shared consumer_static >/dev/null ||
    fail "the $way consumer does not build"
  ! find "$tmp/$way" -name 'unit_*' -o -name 'CTestTestfile.cmake' | grep -q . ||
    fail "the $way consumer built primalloc's tests"
  shared=$(find "$tmp/$way" -name 'libprimalloc.so.[0-9]*' -type f | head -1)
  libdir=$(dirname "$shared") run_consumer "$tmp/$way/consumer_shared" "$shared"
  run_consumer "$tmp/$way/consumer_static"
done
# `make uninstall` takes back every file the staged install wrote.
DESTDIR=$tmp/stage cmake --build "$build" --target uninstall >/dev/null || fail "uninstall failed"
left=$(find "$tmp/stage" -type f -o -type l)
[ -z "$left" ] || fail "uninstall left: $left"
echo "install ok: pkg-config, find_package, add_subdirectory and FetchContent consumers ran; uninstall removed all"
