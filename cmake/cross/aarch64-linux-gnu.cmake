# SPDX-License-Identifier: MIT
# aarch64 Linux with glibc, from Debian's cross compilers, run under
# qemu-aarch64:
#   cmake -S . -B build-aarch64 --toolchain cmake/cross/aarch64-linux-gnu.cmake
set(PM_CROSS_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake)
