# SPDX-License-Identifier: MIT
# Cross-building for riscv64 Linux with Debian's cross compilers
# (gcc-riscv64-linux-gnu, g++-riscv64-linux-gnu); tests run under qemu-user
# (qemu-riscv64), with the target's libraries from /usr/riscv64-linux-gnu.
#   cmake -S . -B build-riscv64 --toolchain cmake/cross/riscv64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER riscv64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64 -L /usr/riscv64-linux-gnu)
