# SPDX-License-Identifier: MIT
# Building against musl with Debian's musl-gcc wrapper (musl-tools) on
# the build machine's architecture.  musl-gcc has no C++ library: the
# C++ tests leave this build (tests/CMakeLists.txt names them).
#   cmake -S . -B build-musl --toolchain cmake/cross/musl.cmake
set(CMAKE_C_COMPILER musl-gcc)
set(PM_CXX_TESTS OFF CACHE BOOL "musl-gcc has no C++ library")
