# attn-mlir: the two set-up commands are `make demo` and `make check`.
# Both install what is missing (Debian packages), configure and build first.

BUILD ?= build

.PHONY: all deps configure build check demo docs clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@bash scripts/configure.sh $(abspath $(BUILD))

build: configure
	@ninja -C $(BUILD) attn-opt mlir-doc

check: build
	@bash scripts/run-tests.sh $(BUILD)

demo: build
	@bash scripts/demo.sh $(BUILD)

docs: configure
	@ninja -C $(BUILD) attn-doc

clean:
	rm -rf $(BUILD)
