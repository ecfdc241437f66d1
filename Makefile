# attn-mlir: the two set-up commands are `make demo` and `make check`.
# Both install what is missing (Debian packages), configure and build first.

BUILD ?= build
PREFIX ?= /usr/local

.PHONY: all deps configure build check demo docs install clean gpu-artifacts

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
