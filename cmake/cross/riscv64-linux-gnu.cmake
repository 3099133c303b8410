# SPDX-License-Identifier: MIT
# riscv64 Linux with glibc, from Debian's cross compilers, run under
# qemu-riscv64:
#   cmake -S . -B build-riscv64 --toolchain cmake/cross/riscv64-linux-gnu.cmake
set(PM_CROSS_ARCH riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake)
