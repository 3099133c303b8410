#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make package`'s Debian package: built with cpack from the build tree,
# it is named primalloc at the project's version and holds the shared
# and static libraries, the header, the pkg-config file, the CMake
# package, the man pages and the licence under /usr.
# Usage: package_check.sh BUILD_DIR VERSION
set -euo pipefail
build=$1 version=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "package_check: $*" >&2; exit 1; }
(cd "$build" && cpack -G DEB -B "$tmp" >/dev/null) || fail "cpack failed"
deb=$(find "$tmp" -maxdepth 1 -name '*.deb')
[ -n "$deb" ] || fail "no .deb in $tmp"
[ "$(dpkg-deb -f "$deb" Package)" = primalloc ] || fail "package name $(dpkg-deb -f "$deb" Package)"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "version $(dpkg-deb -f "$deb" Version), not $version"
contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in "lib/libprimalloc.so.$version" lib/libprimalloc.a "lib/libprimalloc-fast.so.$version" \
  lib/libprimalloc-fast.a include/primalloc.h lib/pkgconfig/primalloc.pc lib/pkgconfig/primalloc-fast.pc \
  lib/cmake/primalloc/primallocConfig.cmake share/man/man3/primalloc.3 share/man/man7/primalloc.7 \
  share/doc/primalloc/LICENSE; do
  grep -qx "./usr/$f" <<<"$contents" || fail "$f not in the package: $contents"
done
echo "package ok: $(basename "$deb")"
