# SPDX-License-Identifier: MIT
# Cross-building for PM_CROSS_ARCH Linux with Debian's cross compilers
# (gcc-ARCH-linux-gnu, g++-ARCH-linux-gnu); tests run under qemu-user
# (qemu-ARCH), with the target's libraries from /usr/ARCH-linux-gnu.
# Included by the toolchain file of each architecture.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${PM_CROSS_ARCH})
set(CMAKE_C_COMPILER ${PM_CROSS_ARCH}-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER ${PM_CROSS_ARCH}-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${PM_CROSS_ARCH}-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${PM_CROSS_ARCH} -L /usr/${PM_CROSS_ARCH}-linux-gnu)
