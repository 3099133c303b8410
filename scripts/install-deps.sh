#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages that `make test` or `make bench` needs and
# that are missing.  Where it cannot (no root and no sudo, no network, no
# apt), it says which are missing and goes on: the tests that need a
# missing program are listed as not run, each with the program it lacks.
# Usage: install-deps.sh test|bench
set -euo pipefail
case "${1:-}" in
  test)  pkgs=(cmake gcc g++ clang valgrind python3 git sqlite3 perl libclang-rt-14-dev redis-server redis-tools lua5.4
               time google-perftools groff-base man-db pkgconf
               musl-tools qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
               gcc-riscv64-linux-gnu g++-riscv64-linux-gnu libc6-dev-riscv64-cross) ;;
  # bench/: the peers (tbbmalloc through its proxy library), GNU time for
  # max RSS, valgrind for instruction counts, gnuplot for the plots, and
  # the real programs (python3, perl, sqlite3, redis).
  bench) pkgs=(cmake gcc g++ python3 gnuplot-nox sqlite3 redis-server redis-tools perl time valgrind
               libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 libtbbmalloc2) ;;
  *) echo "usage: $0 test|bench" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
  echo "install-deps: could not install ${missing[*]}; going on without them" >&2
fi
