# Convenience front-end: everything really happens in CMake under build/.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

ASAN_DIR ?= build-asan
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
# CI budget: -j2 keeps the shared 2-core machines responsive.
SAN_JOBS ?= 2

.PHONY: all deps configure build demo check bench clean format asan fuzz

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh $(BUILD_DIR)

check: deps
	@$(MAKE) --no-print-directory build
	cd $(BUILD_DIR) && ctest --output-on-failure
# Not yet in `check`: `make asan` (LSan reports leaks inside libtracecmd that the
# suppressions do not match on a fresh machine) and `make fuzz` (bounded run).

# Unit tests (and the cstool binary they run) under ASan + UBSan; leaks are errors.
asan: deps
	cmake -S . -B $(ASAN_DIR) -DCSTOOL_SANITIZE=ON -DCSTOOL_BUILD_BENCH=OFF \
	  -DCSTOOL_BUILD_INTEGRATION=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN_DIR) -j $(SAN_JOBS)
	cd $(ASAN_DIR) && ctest --output-on-failure -j $(SAN_JOBS)

# The trace-file fuzzer for FUZZ_SECONDS (clang, ASan + UBSan); new inputs go to
# $(FUZZ_DIR)/corpus, crashes to $(FUZZ_DIR)/crash-* (make them regressions).
fuzz: deps
	cmake -S . -B $(FUZZ_DIR) -DCSTOOL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ_DIR) -j $(SAN_JOBS)
	@scripts/run-fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

bench: deps
	@$(MAKE) --no-print-directory build
	@scripts/bench.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
