# attn-mlir: the two set-up commands are `make demo` and `make check`.
# Both install what is missing (Debian packages), configure and build first.

BUILD ?= build
# The AddressSanitizer + UndefinedBehaviorSanitizer (+ libFuzzer) build.
BUILD_ASAN ?= build-asan
# The source-based coverage build.
BUILD_COVERAGE ?= build-coverage
PREFIX ?= /usr/local

.PHONY: all deps configure build check configure-asan build-asan check-asan coverage fuzz differential demo docs install clean gpu-artifacts

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@bash scripts/configure.sh $(abspath $(BUILD))

# Everything that `install` installs (libraries, attn-opt, the mlir-opt
# plugin, the C API library, the Python package, and the CUDA runtime
# library libattn_cuda_runtime.so where cuda.h is found) and the ODS docs.
build: configure
	@ninja -C $(BUILD) all mlir-doc

check: build
	@bash scripts/run-tests.sh $(BUILD)

# The whole lit suite on a build instrumented with ASan and UBSan (project
# code; libMLIR.so is not), which also builds the attn-fuzz target and runs
# it over its seeds. docs/reliability.md.
configure-asan: deps
	@bash scripts/configure.sh $(abspath $(BUILD_ASAN)) \
	  -DATTN_ENABLE_SANITIZERS=ON -DATTN_ENABLE_FUZZER=ON

build-asan: configure-asan
	@ninja -C $(BUILD_ASAN) all mlir-doc

check-asan: build-asan
	@bash scripts/run-tests.sh $(BUILD_ASAN)

# Line and region coverage of lib/, tools/ and include/ by the lit tests
# (COVERAGE_TESTS: paths under test/, default all), in
# $(BUILD_COVERAGE)/coverage/. docs/reliability.md.
COVERAGE_TESTS ?=
coverage: deps
	@bash scripts/coverage.sh $(abspath $(BUILD_COVERAGE)) $(COVERAGE_TESTS)

# libFuzzer for FUZZ_SECONDS (default 600) on the sanitizer build.
FUZZ_SECONDS ?= 600
fuzz: build-asan
	@bash scripts/fuzz.sh $(FUZZ_SECONDS) $(BUILD_ASAN)

# Random attention problems and unfused graphs against the float64 reference
# (DIFF_COUNT of each, default 200). docs/reliability.md.
DIFF_COUNT ?= 200
differential: build
	@bash scripts/differential.sh $(BUILD) $(DIFF_COUNT)

demo: build
	@bash scripts/demo.sh $(BUILD)

bench-cpu: build
	@bash scripts/install-deps.sh --bench
	@/usr/bin/python3 bench/cpu/attention_bench.py --build $(BUILD) --out bench/cpu/results

# Everything bench/gpu/device-check.sh needs on the GPU machine (cubins in
# an AOT executable linked with libattn_cuda_runtime, PTX, ptxas resource
# lines, a manifest) under build/gpu-artifacts.
gpu-artifacts: build
	@bash scripts/gpu-artifacts.sh $(BUILD)

docs: configure
	@ninja -C $(BUILD) attn-doc

# Headers, libraries, attn-opt, the mlir-opt plugin, the C API library, the
# CMake package (lib/cmake/AttnMLIR) and the Python package
# (python_packages/attn_mlir) into PREFIX.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
