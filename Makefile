# Convenience front-end: everything really happens in CMake under build/.
# The builds CMake runs are sub-makes of this one, which would otherwise print an
# "Entering directory" pair around each of their dozens of steps.
MAKEFLAGS += --no-print-directory
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

# ccache (installed by scripts/install-deps.sh) keeps compiled objects across build
# directories and clones: keys relative to the checkout (base_dir), and without the build
# directory's path (hash_dir off: it only names the compile directory in the debug info),
# make them shareable.
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
LAUNCHER_FLAGS := -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE)
endif

# The reliability build: clang, ASan + UBSan, the unit tests and the fuzzers.
SAN_DIR ?= build-san
FUZZ_SECONDS ?= 60
# CI budget: -j2 keeps the shared 2-core machines responsive.
SAN_JOBS ?= 2

.PHONY: all deps configure build demo check check-sweeps bench release clean format sanitize san-build asan fuzz fresh-machine-check fidelity

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) $(LAUNCHER_FLAGS) $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The demo needs only the binary and its workload, not the test and benchmark programs.
demo: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target cstool cstool_workload
	@scripts/demo.sh $(BUILD_DIR)

# Everything: the build and its tests (unit + integration, recording for real), then
# the unit tests under ASan + UBSan (leaks are errors) and the fuzzer for FUZZ_SECONDS.
check: deps
	@$(MAKE) --no-print-directory build
	cd $(BUILD_DIR) && ctest --output-on-failure
	@$(MAKE) --no-print-directory sanitize

sanitize: asan
	@scripts/run-fuzz.sh $(SAN_DIR) $(FUZZ_SECONDS)

# -O0 with line tables only: half the compile time of -O2 -g, and still file:line in
# every sanitizer report (CI time is the budget here, not the fuzzer's speed).
san-build:
	cmake -S . -B $(SAN_DIR) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang $(LAUNCHER_FLAGS) \
	  -DCSTOOL_FUZZ=ON -DCSTOOL_BUILD_BENCH=OFF -DCSTOOL_BUILD_INTEGRATION=OFF \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
	  -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only
	cmake --build $(SAN_DIR) -j $(SAN_JOBS)

# The unit tests (and the cstool binary they run) under ASan + UBSan.
asan: deps
	@$(MAKE) --no-print-directory san-build
	cd $(SAN_DIR) && ctest --output-on-failure -j $(SAN_JOBS)

# The damage sweeps (every Nth byte of a file cut or flipped) whole under ASan + UBSan;
# `make check` runs them whole in the release build and every 8th case under the
# sanitizers (tests/support/sweep.h), where they would take most of its time.
check-sweeps: deps
	@$(MAKE) --no-print-directory san-build
	cd $(SAN_DIR) && CSTOOL_FULL_SWEEPS=1 ctest --output-on-failure -j $(SAN_JOBS) \
	  -R 'Corruption|BadFile.TruncatedAtEveryByte|V7Damage'

# Only the fuzzer, for FUZZ_SECONDS; new inputs go to $(SAN_DIR)/corpus, crashes to
# $(SAN_DIR)/artifacts (make them regressions in tests/fuzz/regressions).
fuzz: deps
	@$(MAKE) --no-print-directory san-build
	@scripts/run-fuzz.sh $(SAN_DIR) $(FUZZ_SECONDS)

# Times against the kernel's own accounting on a matrix of workloads, idle and under a
# parallel build (root; a few minutes; see the README).
fidelity: deps
	@$(MAKE) --no-print-directory build
	@scripts/fidelity.sh $(BUILD_DIR)

# The README's two commands on a fresh minimal Debian 12 (slow; see the README).
fresh-machine-check:
	@scripts/fresh-machine-check.sh

# The fastest binary, $(RELEASE_DIR)/cstool: built with profile-guided optimisation
# (two builds and a training run in between; see scripts/pgo-build.sh).
RELEASE_DIR ?= build-release
release: deps
	@JOBS=$(JOBS) scripts/pgo-build.sh $(RELEASE_DIR)

# The benchmarks, of the release binary (and of the programs built beside it).
bench: deps
	@test "$$(id -u)" -eq 0 || { echo "make bench: must run as root (it records)" >&2; exit 2; }
	@CSTOOL_PGO_BENCH=ON JOBS=$(JOBS) scripts/pgo-build.sh $(RELEASE_DIR)
	@scripts/bench.sh $(RELEASE_DIR)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) $(SAN_DIR) $(RELEASE_DIR)
