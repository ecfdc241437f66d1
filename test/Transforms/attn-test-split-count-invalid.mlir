// RUN: attn-opt %s --attn-test-split-count --split-input-file --verify-diagnostics

// expected-error @+1 {{needs integer attributes 'attn.test.wave_blocks' and 'attn.test.max_splits'}}
func.func private @no_cap(index, index) -> index
    attributes {attn.test.wave_blocks = 264 : i64}

// -----

// expected-error @+1 {{'attn.test.wave_blocks' and 'attn.test.max_splits' must be positive}}
func.func private @empty_wave(index, index) -> index
    attributes {attn.test.wave_blocks = 0 : i64, attn.test.max_splits = 128 : i64}

// -----

// expected-error @+1 {{must have the type (index, index) -> index}}
func.func private @wrong_type(index) -> index
    attributes {attn.test.wave_blocks = 264 : i64, attn.test.max_splits = 128 : i64}

// -----

// expected-error @+1 {{must be a declaration: the pass defines it}}
func.func @defined(%b: index, %k: index) -> index
    attributes {attn.test.wave_blocks = 264 : i64, attn.test.max_splits = 128 : i64} {
  return %b : index
}
