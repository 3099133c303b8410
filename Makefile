# SPDX-License-Identifier: MIT
# Thin wrapper around CMake: `make` builds the Release libraries,
# `make test` builds and runs the ctest suite (here, then for musl,
# aarch64 and riscv64: scripts/platforms.sh), `make bench` runs the
# allocator comparison, `make install PREFIX=/usr/local` installs the
# libraries, header, pkg-config file, CMake package and man pages (with
# DESTDIR= to stage them), `make uninstall` removes them again, and
# `make package` builds a Debian package of them.  test and bench
# install the Debian packages they need.
BUILD ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all test bench fuzz install uninstall package clean

all:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS) --target primalloc primalloc_static primalloc_fast primalloc_fast_static

test:
	scripts/install-deps.sh test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) --timeout 900
	scripts/platforms.sh $(BUILD)

bench:
	scripts/install-deps.sh bench
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS) --target primalloc primalloc_fast bench_workloads
	bench/run.sh $(BUILD)

fuzz:
	scripts/install-deps.sh test
	fuzz/run.sh $(BUILD) $${FUZZ_SECONDS:-600}

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

uninstall:
	cmake --build $(BUILD) --target uninstall

package: all
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD)
